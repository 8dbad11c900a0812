/**
 * The messages of a model call whose input left them out (a long conversation), read from the
 * workflow that asked for it. Read in pages (`getStepMessages` with `from`/`max_chars`), so no
 * answer is one payload the size of the conversation, and kept per thread: the next step's call
 * on this worker asks only for what was appended since, as long as the workflow's transcript
 * revision says the front it keeps is still the transcript's front. A real model request needs
 * the whole conversation; reading it again from the workflow at every step does not. And a call
 * that brings what was appended since the previous one (`CallModelInput.appended`) to a worker
 * that holds the rest asks the workflow nothing: no round trip through the server at every step.
 */
import type { Client } from '@temporalio/client';
import type { AppendedMessages, CallModelInput } from '../common/activities';
import { FailureType } from '../common/failures';
import { getStepMessagesQuery, readPageChars } from '../common/messages';
import { KeptMessages, readPages, type HeldMessages } from '../platform/paged-reader';
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

  /** Pages asked of workflows so far (for tests and metrics). */
  pagesAsked = 0;

  /** Calls answered from what was kept and what their input brought, asking nothing (for tests and metrics). */
  heldAndAppended = 0;

  /** Forgets every thread (as a worker that restarts does). */
  clear(): void {
    this.#kept.clear();
  }

  async read(
    client: Client,
    execution: { workflowId: string; runId: string },
    input: Pick<CallModelInput, 'run_id' | 'step' | 'appended'>,
  ): Promise<ModelMessage[]> {
    const joined =
      input.appended === undefined ? undefined : this.#joined(execution.workflowId, input.appended);
    if (joined !== undefined) {
      this.heldAndAppended++;
      this.#kept.keep(execution.workflowId, joined);
      return joined.messages;
    }
    const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
    const read = await readPages<ModelMessage>({
      held: this.#kept.take(execution.workflowId),
      nextPage: async (held) => {
        this.pagesAsked++;
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

  /**
   * What is held of the thread followed by `appended`, when what is held (read under the same
   * revision, so the transcript's front) reaches as far as `appended` starts; else undefined.
   */
  #joined(workflowId: string, appended: AppendedMessages): HeldMessages<ModelMessage> | undefined {
    const held = this.#kept.peek(workflowId);
    if (held === undefined || held.revision !== appended.revision || held.messages.length < appended.from)
      return undefined;
    // Held beyond `from` (a step that ended without an answer): the step's own messages replace it.
    const beyond = held.messages.slice(appended.from);
    const front = beyond.length === 0 ? held.messages : held.messages.slice(0, appended.from);
    return {
      revision: held.revision,
      messages: front.concat(appended.messages),
      chars:
        held.chars -
        (beyond.length === 0 ? 0 : JSON.stringify(beyond).length) +
        JSON.stringify(appended.messages).length,
    };
  }
}
