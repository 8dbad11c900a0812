/**
 * Publishes a model call's streamed text to the conversation's event log as `message.delta`
 * events, coalesced into one event per ~100 ms so the bounded log holds answers, not tokens.
 * Publishing is best effort: a failure here never fails the model call (the final answer still
 * arrives as `message.completed`).
 */
import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { eventsTopic, type KeelEvent } from '../common/events';

/** How often buffered text becomes one `message.delta` event. */
export const deltaBatchMs = 100;
/** The final flush may take this long before the activity returns without it. */
const finalFlushTimeoutMs = 5_000;

export interface DeltaTarget {
  run_id: string;
  step: number;
}

export class DeltaPublisher {
  readonly #stream: WorkflowStreamClient;
  readonly #target: DeltaTarget;
  readonly #attempt: number;
  readonly #timer: NodeJS.Timeout;
  #buffer = '';
  #failed = false;

  private constructor(stream: WorkflowStreamClient, target: DeltaTarget, attempt: number) {
    this.#stream = stream;
    this.#target = target;
    this.#attempt = attempt;
    this.#timer = setInterval(() => this.#publish(), deltaBatchMs);
  }

  /** A publisher for the current activity's workflow, or undefined outside a workflow's activity. */
  static forCurrentActivity(target: DeltaTarget): DeltaPublisher | undefined {
    try {
      const context = Context.current();
      const stream = WorkflowStreamClient.fromWithinActivity({
        batchInterval: `${deltaBatchMs} milliseconds`,
        maxRetryDuration: '30 seconds',
      });
      return new DeltaPublisher(stream, target, context.info.attempt);
    } catch {
      return undefined;
    }
  }

  /** Buffers a piece of streamed text. */
  push = (text: string): void => {
    this.#buffer += text;
  };

  #publish(): void {
    if (this.#buffer === '' || this.#failed) return;
    const event: KeelEvent = {
      event: 'message.delta',
      data: { ...this.#target, attempt: this.#attempt, text: this.#buffer },
    };
    this.#buffer = '';
    try {
      this.#stream.topic<KeelEvent>(eventsTopic).publish(event, { forceFlush: true });
    } catch {
      this.#failed = true;
    }
  }

  /**
   * For a call that succeeded: stops publishing, waits (bounded) until every batch already sent
   * has reached the workflow, and hands back the text not yet sent, for the activity's result to
   * carry. The workflow publishes it before the answer, so no delta is lost and the last batch
   * costs no round trip of its own. Never throws.
   */
  async finish(): Promise<{ unpublished_delta?: { attempt: number; text: string } }> {
    clearInterval(this.#timer);
    const text = this.#buffer;
    this.#buffer = '';
    await this.#drain();
    return text === '' || this.#failed ? {} : { unpublished_delta: { attempt: this.#attempt, text } };
  }

  /**
   * For a call that failed: publishes what is left and waits (bounded) until the workflow has
   * it. Never throws.
   */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#publish();
    await this.#drain();
  }

  async #drain(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, finalFlushTimeoutMs);
    });
    try {
      await Promise.race([this.#stream[Symbol.asyncDispose]().catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
