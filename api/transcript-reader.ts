/**
 * The API's reads of a thread's transcript: in bounded pages (`getTranscriptPage`), so no answer
 * is one payload the size of the conversation, and kept per thread, so the next read (the next
 * `runs/wait` answer) asks only for the messages appended since. The thread's transcript revision
 * says whether what is kept is still the transcript's front; when not (a compaction, a fork), the
 * read starts over. The API still holds no state: what it keeps is only ever a copy it checks.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { getTranscriptPageQuery, readPageChars, type TranscriptPage } from '../common/messages';
import { sequenceOf, type Message } from '../common/transcript';

interface Kept {
  revision: string;
  messages: Message[];
  chars: number;
}

/** Reads that found the transcript rewritten under them before giving up. */
const maxRestarts = 5;

export interface TranscriptReaderOptions {
  /** Characters per page. @default readPageChars */
  pageChars?: number;
  /** Characters kept across all threads; the least recently read go first. @default 16 Mi */
  keptChars?: number;
}

export class TranscriptReader {
  readonly #kept = new Map<string, Kept>();
  #keptChars = 0;
  readonly #pageChars: number;
  readonly #keptCharsLimit: number;

  constructor(options: TranscriptReaderOptions = {}) {
    this.#pageChars = options.pageChars ?? readPageChars;
    this.#keptCharsLimit = options.keptChars ?? 16 * 1024 * 1024;
  }

  /** The whole transcript (kept for the next read of the same thread). */
  async read(threadId: string, handle: WorkflowHandle): Promise<Message[]> {
    const kept = this.#take(threadId);
    let start = kept ?? { revision: '', messages: [], chars: 0 };
    for (let attempt = 0; attempt <= maxRestarts; attempt++) {
      const read = await this.#readAfter(handle, start);
      if (read !== undefined) {
        this.#keep(threadId, read);
        return read.messages;
      }
      start = { revision: '', messages: [], chars: 0 };
    }
    throw new Error(`the transcript of thread ${threadId} kept changing under ${maxRestarts} reads`);
  }

  /** The message the thread's kept copy ends with (`m<after>`; 0 for none): what a next read asks after. */
  keptAfter(threadId: string): number {
    const last = this.#kept.get(threadId)?.messages.at(-1);
    return last === undefined ? 0 : (sequenceOf(last.id) ?? 0);
  }

  /**
   * The whole transcript from the kept copy and `page`, the messages after `m<after>` that came
   * with a waited run's answer (decision 0255), as `read` would have read them; undefined, with
   * nothing changed, unless the copy still ends at `after` under the page's revision.
   */
  withPage(threadId: string, after: number, page: TranscriptPage): Message[] | undefined {
    const kept = this.#kept.get(threadId);
    const held = kept?.messages ?? [];
    if (page.more || after !== this.keptAfter(threadId)) return undefined;
    if (held.length > 0 && kept!.revision !== page.revision) return undefined;
    const read: Kept = {
      revision: page.revision,
      messages: held.length === 0 ? page.messages : held.concat(page.messages),
      chars: (held.length === 0 ? 0 : kept!.chars) + JSON.stringify(page.messages).length,
    };
    this.#keep(threadId, read);
    return read.messages;
  }

  /** Messages appended after message `m<after>`, page by page (nothing kept). */
  async readAfter(handle: WorkflowHandle, after: number): Promise<Message[]> {
    for (let attempt = 0; attempt <= maxRestarts; attempt++) {
      const read = await this.#pages(handle, after, undefined);
      if (read !== undefined) return read.messages;
    }
    throw new Error(`the transcript of ${handle.workflowId} kept changing under ${maxRestarts} reads`);
  }

  /** `start` and every message after it; undefined when the transcript was rewritten meanwhile. */
  async #readAfter(handle: WorkflowHandle, start: Kept): Promise<Kept | undefined> {
    const last = start.messages.at(-1);
    const after = last === undefined ? 0 : (sequenceOf(last.id) ?? 0);
    const read = await this.#pages(handle, after, start.messages.length === 0 ? undefined : start.revision);
    if (read === undefined) return undefined;
    return {
      revision: read.revision,
      messages: start.messages.length === 0 ? read.messages : start.messages.concat(read.messages),
      chars: start.chars + read.chars,
    };
  }

  /**
   * Pages after `after` until the last; undefined when a page's revision differs from `revision`
   * (or from the first page's): the messages read so far are not one transcript's.
   */
  async #pages(
    handle: WorkflowHandle,
    after: number,
    revision: string | undefined,
  ): Promise<Kept | undefined> {
    let messages: Message[] = [];
    let chars = 0;
    let expected = revision;
    let cursor = after;
    for (;;) {
      const page = await handle.query(getTranscriptPageQuery, { after: cursor, max_chars: this.#pageChars });
      if (expected !== undefined && page.revision !== expected) return undefined;
      expected = page.revision;
      messages = messages.length === 0 ? page.messages : messages.concat(page.messages);
      chars += JSON.stringify(page.messages).length;
      const last = page.messages.at(-1);
      if (!page.more || last === undefined) return { revision: page.revision, messages, chars };
      cursor = sequenceOf(last.id) ?? cursor;
    }
  }

  #take(threadId: string): Kept | undefined {
    const kept = this.#kept.get(threadId);
    if (kept === undefined) return undefined;
    this.#kept.delete(threadId);
    this.#keptChars -= kept.chars;
    return kept;
  }

  #keep(threadId: string, kept: Kept): void {
    this.#take(threadId);
    if (kept.chars > this.#keptCharsLimit) return;
    this.#kept.set(threadId, kept);
    this.#keptChars += kept.chars;
    for (const [id, oldest] of this.#kept) {
      if (this.#keptChars <= this.#keptCharsLimit) break;
      this.#kept.delete(id);
      this.#keptChars -= oldest.chars;
    }
  }
}
