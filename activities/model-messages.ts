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
import { KeptMessages, readPages } from '../common/paged-reader';
import type { ModelMessage } from '../common/transcript';
import { failure } from './errors';

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
  /** By workflow id. */
  readonly #kept = new KeptMessages<ModelMessage>(keptCharsLimit);
  readonly #pageChars: number;

  constructor(options: ReadStepMessagesOptions = {}) {
    this.#pageChars = options.pageChars ?? readPageChars;
  }

  /** Characters of messages kept now (for tests and metrics). */
  get keptChars(): number {
    return this.#kept.chars;
  }

  async read(
    client: Client,
    execution: { workflowId: string; runId: string },
    input: Pick<CallModelInput, 'run_id' | 'step'>,
  ): Promise<ModelMessage[]> {
    const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
    const read = await readPages<ModelMessage>({
      held: this.#kept.take(execution.workflowId),
      nextPage: async (held) => {
        const answer = await handle.query(getStepMessagesQuery, {
          run_id: input.run_id,
          step: input.step,
          from: held.length,
          max_chars: this.#pageChars,
        });
        // Anything that throws here (the workflow's worker is busy or gone) heals on the next attempt.
        if (!answer.current) throw failure(answer.type, answer.message, { nonRetryable: true });
        // A worker of an earlier release answers with every message at once, and nothing to check.
        if (answer.total === undefined || answer.revision === undefined)
          return { everything: answer.messages };
        return {
          revision: answer.revision,
          messages: answer.messages,
          more: held.length + answer.messages.length < answer.total,
          rewritten: held.length > answer.total,
        };
      },
      // A page holds one message at least; an empty one is a workflow answering wrongly.
      emptyPage: () =>
        failure(FailureType.modelRequestInvalid, 'the workflow answered an empty page of messages'),
    });
    if (read.checked) this.#kept.keep(execution.workflowId, read.held);
    return read.held.messages;
  }
}
