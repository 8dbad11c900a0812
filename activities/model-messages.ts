/**
 * The messages of a model call whose input left them out (a long conversation), read from the
 * workflow that asked for it. Read in pages (`getStepMessages` with `from`/`max_chars`), so no
 * answer is one payload the size of the conversation, and kept per thread: the next step's call
 * on this worker asks only for what was appended since, as long as the workflow's transcript
 * revision says the front it keeps is still the transcript's front. A real model request needs
 * the whole conversation; reading it again from the workflow at every step does not.
 */
import type { Client } from '@temporalio/client';
import type { CallModelInput } from '../common/activities';
import { FailureType } from '../common/failures';
import { getStepMessagesQuery, readPageChars } from '../common/messages';
import type { ModelMessage } from '../common/transcript';
import { failure } from './errors';

interface Kept {
  revision: string;
  messages: ModelMessage[];
  chars: number;
}

/**
 * Characters of messages kept across all threads (the least recently used go first). A thread
 * whose messages travel inline (under 64 KiB) is never kept.
 */
const keptCharsLimit = 32 * 1024 * 1024;

export interface ReadStepMessagesOptions {
  /** Characters per page. @default readPageChars */
  pageChars?: number;
}

export class StepMessagesReader {
  /** By workflow id; a Map iterates in insertion order, so re-inserting on use makes it an LRU. */
  readonly #kept = new Map<string, Kept>();
  #keptChars = 0;
  readonly #pageChars: number;

  constructor(options: ReadStepMessagesOptions = {}) {
    this.#pageChars = options.pageChars ?? readPageChars;
  }

  /** Characters of messages kept now (for tests and metrics). */
  get keptChars(): number {
    return this.#keptChars;
  }

  async read(
    client: Client,
    execution: { workflowId: string; runId: string },
    input: Pick<CallModelInput, 'run_id' | 'step'>,
  ): Promise<ModelMessage[]> {
    const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
    const kept = this.#take(execution.workflowId);
    let messages = kept?.messages ?? [];
    let chars = kept?.chars ?? 0;
    let revision = kept?.revision;
    for (;;) {
      const answer = await handle.query(getStepMessagesQuery, {
        run_id: input.run_id,
        step: input.step,
        from: messages.length,
        max_chars: this.#pageChars,
      });
      // Anything that throws here (the workflow's worker is busy or gone) heals on the next attempt.
      if (!answer.current) throw failure(answer.type, answer.message, { nonRetryable: true });
      // A worker of an earlier release answers with every message at once, and nothing to check.
      if (answer.total === undefined || answer.revision === undefined) return answer.messages;
      if ((revision !== undefined && answer.revision !== revision) || messages.length > answer.total) {
        // The transcript was rewritten (compacted, forked) since: what we hold is not its front.
        messages = [];
        chars = 0;
        revision = answer.revision;
        continue;
      }
      revision = answer.revision;
      messages = messages.concat(answer.messages);
      chars += JSON.stringify(answer.messages).length;
      if (messages.length >= answer.total) break;
      // A page holds one message at least; an empty one is a workflow answering wrongly.
      if (answer.messages.length === 0)
        throw failure(FailureType.modelRequestInvalid, 'the workflow answered an empty page of messages');
    }
    this.#keep(execution.workflowId, { revision, messages, chars });
    return messages;
  }

  #take(workflowId: string): Kept | undefined {
    const kept = this.#kept.get(workflowId);
    if (kept === undefined) return undefined;
    this.#kept.delete(workflowId);
    this.#keptChars -= kept.chars;
    return kept;
  }

  #keep(workflowId: string, kept: Kept): void {
    this.#take(workflowId);
    if (kept.chars > keptCharsLimit) return;
    this.#kept.set(workflowId, kept);
    this.#keptChars += kept.chars;
    for (const [id, oldest] of this.#kept) {
      if (this.#keptChars <= keptCharsLimit) break;
      this.#kept.delete(id);
      this.#keptChars -= oldest.chars;
    }
  }
}
