/**
 * The API's reads of a thread's transcript: in bounded pages (`getTranscriptPage`), so no answer
 * is one payload the size of the conversation, and kept per thread, so the next read (the next
 * `runs/wait` answer) asks only for the messages appended since. The thread's transcript revision
 * says whether what is kept is still the transcript's front; when not (a compaction, a fork), the
 * read starts over. The API still holds no state: what it keeps is only ever a copy it checks.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { getTranscriptPageQuery, readPageChars, type TranscriptPage } from '../../common/messages';
import { type HeldMessages, KeptMessages, readPages } from '../../platform/paged-reader';
import { sequenceOf, type Message } from '../../common/transcript';

/** Reads that found the transcript rewritten under them before giving up. */
const maxRestarts = 5;

export interface TranscriptReaderOptions {
  /** Characters per page. @default readPageChars */
  pageChars?: number;
  /** Characters kept across all threads; the least recently read go first. @default 16 Mi */
  keptChars?: number;
}

export class TranscriptReader {
  readonly #kept: KeptMessages<Message>;
  readonly #pageChars: number;

  constructor(options: TranscriptReaderOptions = {}) {
    this.#pageChars = options.pageChars ?? readPageChars;
    this.#kept = new KeptMessages(options.keptChars ?? 16 * 1024 * 1024);
  }

  /** The whole transcript (kept for the next read of the same thread). */
  async read(threadId: string, handle: WorkflowHandle): Promise<Message[]> {
    const held = await this.#pages(handle, 0, this.#kept.take(threadId), `thread ${threadId}`);
    this.#kept.keep(threadId, held);
    return held.messages;
  }

  /** The message the thread's kept copy ends with (`m<after>`; 0 for none): what a next read asks after. */
  keptAfter(threadId: string): number {
    const last = this.#kept.peek(threadId)?.messages.at(-1);
    return last === undefined ? 0 : (sequenceOf(last.id) ?? 0);
  }

  /**
   * The whole transcript from the kept copy and `page`, the messages after `m<after>` that came
   * with a waited run's answer (decision 0255), as `read` would have read them; undefined, with
   * nothing changed, unless the copy still ends at `after` under the page's revision.
   */
  withPage(threadId: string, after: number, page: TranscriptPage): Message[] | undefined {
    if (page.more || after !== this.keptAfter(threadId)) return undefined;
    const kept = this.#kept.peek(threadId);
    if (kept !== undefined && kept.messages.length > 0 && kept.revision !== page.revision) return undefined;
    const held: HeldMessages<Message> =
      kept === undefined || kept.messages.length === 0
        ? { revision: page.revision, messages: page.messages, chars: JSON.stringify(page.messages).length }
        : {
            revision: page.revision,
            messages: kept.messages.concat(page.messages),
            chars: kept.chars + JSON.stringify(page.messages).length,
          };
    this.#kept.keep(threadId, held);
    return held.messages;
  }

  /** Messages appended after message `m<after>`, page by page (nothing kept). */
  async readAfter(handle: WorkflowHandle, after: number): Promise<Message[]> {
    return (await this.#pages(handle, after, undefined, handle.workflowId)).messages;
  }

  /** `held` and the pages after it, from message `m<after>` when nothing is held. */
  async #pages(
    handle: WorkflowHandle,
    after: number,
    held: HeldMessages<Message> | undefined,
    subject: string,
  ): Promise<HeldMessages<Message>> {
    let cursor = after;
    const read = await readPages<Message>({
      held,
      nextPage: async (messages) => {
        const last = messages.at(-1);
        cursor = last === undefined ? after : (sequenceOf(last.id) ?? cursor);
        const page = await handle.query(getTranscriptPageQuery, {
          after: cursor,
          max_chars: this.#pageChars,
        });
        return { revision: page.revision, messages: page.messages, more: page.more };
      },
      maxRestarts,
      restartsExhausted: () =>
        new Error(`the transcript of ${subject} kept changing under ${maxRestarts} reads`),
    });
    return read.held;
  }
}
