/**
 * How a thread's messages are read from its workflow outside it (the model activity, the API):
 * in bounded pages, so no answer is one payload the size of the conversation, and kept per
 * thread, so the next read asks only for the messages appended since. The transcript's revision
 * says whether what is kept is still the transcript's front; when a page says otherwise (a
 * compaction, a fork), the read starts over. Each reader asks its own query for a page.
 */
import { LRUCache } from 'lru-cache';

/** What a reader holds of one thread: the front of its transcript, read under `revision`. */
export interface HeldMessages<Message> {
  revision: string;
  messages: Message[];
  /** Characters of `messages` as JSON. */
  chars: number;
}

/** One page as the reader's query answers it. */
export type MessagePage<Message> =
  | {
      revision: string;
      messages: Message[];
      /** Whether messages follow this page. */
      more: boolean;
      /** The page says what is held is not the transcript's front, whatever its revision. */
      rewritten?: boolean;
    }
  /** Every message at once, and nothing to check them by (a worker of an earlier release). */
  | { everything: Message[] };

export interface ReadPagesOptions<Message> {
  /** What is held already (kept from an earlier read); pages follow it. */
  held?: HeldMessages<Message> | undefined;
  /** The page after `held` (the messages held so far, empty after a restart). */
  nextPage(held: readonly Message[]): Promise<MessagePage<Message>>;
  /** Restarts allowed before `restartsExhausted`. @default unbounded */
  maxRestarts?: number;
  restartsExhausted?(): Error;
  /** A page with no messages that says more follow; without it, such a page ends the read. */
  emptyPage?(): Error;
}

const nothingHeld = <Message>(): HeldMessages<Message> => ({ revision: '', messages: [], chars: 0 });

export interface PagesRead<Message> {
  held: HeldMessages<Message>;
  /** False when a page gave every message at once: nothing says later whether they are the front. */
  checked: boolean;
}

/** Reads page after page until the last. */
export async function readPages<Message>(options: ReadPagesOptions<Message>): Promise<PagesRead<Message>> {
  let held = options.held ?? nothingHeld<Message>();
  let restarts = 0;
  for (;;) {
    const page = await options.nextPage(held.messages);
    if ('everything' in page) {
      const chars = JSON.stringify(page.everything).length;
      return { held: { revision: '', messages: page.everything, chars }, checked: false };
    }
    if (page.rewritten === true || (held.messages.length > 0 && page.revision !== held.revision)) {
      // The transcript was rewritten (compacted, forked) since: what is held is not its front.
      if (++restarts > (options.maxRestarts ?? Infinity))
        throw options.restartsExhausted?.() ?? new Error('the transcript kept changing under the read');
      held = nothingHeld();
      continue;
    }
    held = {
      revision: page.revision,
      messages: held.messages.length === 0 ? page.messages : held.messages.concat(page.messages),
      chars: held.chars + JSON.stringify(page.messages).length,
    };
    if (!page.more) return { held, checked: true };
    if (page.messages.length === 0) {
      if (options.emptyPage === undefined) return { held, checked: true };
      throw options.emptyPage();
    }
  }
}

/**
 * What readers keep across reads, by thread, up to a number of characters in all: the least
 * recently read go first, and a thread larger than the limit is not kept.
 */
export class KeptMessages<Message> {
  readonly #kept: LRUCache<string, HeldMessages<Message>>;

  constructor(readonly limitChars: number) {
    // A thread larger than the limit is not stored at all; an empty one still counts one.
    this.#kept = new LRUCache({ maxSize: limitChars, sizeCalculation: (held) => Math.max(1, held.chars) });
  }

  /** Characters kept now (for tests and metrics). */
  get chars(): number {
    return this.#kept.calculatedSize;
  }

  /** What is kept of a thread, left kept (and where it was in the order). */
  peek(key: string): HeldMessages<Message> | undefined {
    return this.#kept.peek(key);
  }

  /** What is kept of a thread, no longer kept until given back with `keep`. */
  take(key: string): HeldMessages<Message> | undefined {
    const kept = this.#kept.peek(key);
    this.#kept.delete(key);
    return kept;
  }

  /** Forgets every thread. */
  clear(): void {
    this.#kept.clear();
  }

  keep(key: string, held: HeldMessages<Message>): void {
    this.#kept.delete(key);
    this.#kept.set(key, held);
  }
}
