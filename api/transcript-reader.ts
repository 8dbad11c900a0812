/**
 * The API's reads of a thread's transcript: in bounded pages (`getTranscriptPage`), so no answer
 * is one payload the size of the conversation, and kept per thread, so the next read (the next
 * `runs/wait` answer) asks only for the messages appended since. The thread's transcript revision
 * says whether what is kept is still the transcript's front; when not (a compaction, a fork), the
 * read starts over. The API still holds no state: what it keeps is only ever a copy it checks.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { getTranscriptPageQuery, readPageChars } from '../common/messages';
import { type HeldMessages, KeptMessages, readPages } from '../common/paged-reader';
import { sequenceOf, type Message } from '../common/transcript';

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
