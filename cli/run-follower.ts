/**
 * How `keel chat` follows a run: over its SSE stream in Keel's native vocabulary
 * (`GET /threads/:id/runs/:run_id/stream?stream_mode=keel`),
 * so the answer shows token by token. The chat only sees the callbacks.
 *
 * The stream is read with `eventsource-parser` over `fetch` (docs/decisions/0053): a dropped
 * connection (an API restart) is reopened with `Last-Event-ID`, and durable events at or below
 * the last one handled are dropped, so nothing is shown twice. `message.delta` carries the model
 * call's `attempt`: a retried call restarts its text, so deltas of an earlier attempt are dropped
 * and the chat is told (`onRetry`) before the new attempt's text.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { PendingApproval } from '../common/approvals';
import type { KeelEvent } from '../common/events';
import { compareStreamPositions, parseStreamId } from '../common/stream-ids';
import type { Run } from '../common/run';
import type { AssistantMessage } from '../common/transcript';
import type { Usage } from '../common/usage';
import type { KeelApiClient } from './api-client';
import { ApiCallError, ApiConnectionError } from '../common/api-call-errors';
import { KeelError } from '../common/errors';

/** An approval the run waits for, as `approval.requested` announces it. */
export type ApprovalRequest = Pick<
  PendingApproval,
  'approval_id' | 'run_id' | 'tool' | 'input' | 'expires_at'
>;

export interface ToolActivity {
  tool_use_id: string;
  name: string;
}

export interface RunFollowerHandlers {
  /** More text of the model call in progress. */
  onDelta(text: string): void;
  /** The model call was retried: the text given since it began does not count; attempt `attempt`'s follows. */
  onRetry(attempt: number): void;
  /**
   * An assistant message entered the transcript. `streamed`: its text already came through
   * `onDelta`; otherwise the whole message is new to the reader.
   */
  onMessage(message: AssistantMessage, streamed: boolean): void;
  onToolStarted(tool: ToolActivity & { input: Record<string, unknown> }): void;
  /** A tool call has its result: it ran, or it never will (denied, timed out); `content` is a preview. */
  onToolCompleted(tool: ToolActivity & { is_error: boolean; content: string }): void;
  /** The run's and the thread's usage so far. */
  onUsage(run: Usage, thread: Usage): void;
  /** The run now waits for this decision; resolve once it is answered (or expired). */
  onApproval(approval: ApprovalRequest): Promise<void>;
  onProgress(run: Run): void;
  /** Something the reader should know that is not the answer: a budget warning, a lost stream. */
  onNotice(text: string): void;
  /** The stream dropped; it is being reopened. */
  onReconnecting(): void;
}

export interface RunFollower {
  follow(threadId: string, runId: string, handlers: RunFollowerHandlers): Promise<Run>;
}

export interface StreamingRunFollowerOptions {
  /** Give up when no connection could be opened for this long. @default 120000 */
  reconnectForMs?: number;
  /** Reopen a connection that has been silent this long (the API sends `heartbeat` every 5 s). @default 30000 */
  idleMs?: number;
}

interface StreamEvent {
  /** The event's id (common/stream-ids.ts): a log offset, or with the live text's attempt and characters. */
  id?: string;
  event: string;
  data: unknown;
}

/** A handler threw: the follow ends with its error instead of reconnecting. */
class HandlerFailed extends KeelError {
  constructor(override readonly cause: unknown) {
    super('a run follower handler failed');
  }
}

/** Whether event id `id` comes after `last` in one stream (an id it cannot read counts as new). */
function isAfter(id: string, last: string): boolean {
  const [position, before] = [parseStreamId(id), parseStreamId(last)];
  return position === undefined || before === undefined || compareStreamPositions(position, before) > 0;
}

const textOf = (message: AssistantMessage): string =>
  message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/** Follows one run: which deltas count, which events were handled, which messages were shown. */
class RunView {
  lastId: string | undefined;
  ended = false;
  /** The log was truncated past our cursor: some events were never seen. */
  lostEvents = false;
  readonly shownMessages = new Set<string>();
  private readonly asked = new Set<string>();
  private call: { step: number; attempt: number; text: string } | undefined;

  constructor(private readonly handlers: RunFollowerHandlers) {}

  async handle(message: StreamEvent): Promise<void> {
    if (message.id !== undefined) {
      if (this.lastId !== undefined && !isAfter(message.id, this.lastId)) return;
      await this.durable({ event: message.event, data: message.data } as KeelEvent);
      this.lastId = message.id;
      return;
    }
    if (message.event === 'end') this.ended = true;
    // A run whose events were truncated away is told by a `run.*` event without an id.
    else if (message.event.startsWith('run.'))
      await this.durable({ event: message.event, data: message.data } as KeelEvent);
  }

  private async durable(event: KeelEvent): Promise<void> {
    const { handlers } = this;
    switch (event.event) {
      case 'message.delta':
        return this.delta(event.data);
      case 'message.completed': {
        const { message } = event.data;
        if (message.role !== 'assistant' || this.shownMessages.has(message.id)) return;
        this.shownMessages.add(message.id);
        const full = textOf(message);
        const call = this.call;
        const streamed = call?.text ?? '';
        this.call = undefined;
        if (full.startsWith(streamed)) {
          // Text the stream did not carry (a last batch lost) is given as more deltas.
          if (full.length > streamed.length && streamed !== '') handlers.onDelta(full.slice(streamed.length));
          return handlers.onMessage(message, streamed !== '');
        }
        // The text streamed belongs to an attempt that did not count (the next one never streamed).
        handlers.onRetry(call!.attempt + 1);
        return handlers.onMessage(message, false);
      }
      case 'tool.started':
        return handlers.onToolStarted(event.data);
      case 'tool.completed':
        return handlers.onToolCompleted(event.data);
      case 'usage.updated':
        return handlers.onUsage(event.data.usage, event.data.thread_usage);
      case 'approval.requested':
        if (this.asked.has(event.data.approval_id)) return;
        this.asked.add(event.data.approval_id);
        return handlers.onApproval(event.data);
      case 'budget.warning':
        return handlers.onNotice('budget warning: this thread has used 80 % of its limit');
      case 'budget.exceeded':
        return handlers.onNotice('budget exceeded: no further model call until the limit is raised');
      case 'run.created':
      case 'run.started':
      case 'run.deferred':
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled':
        return handlers.onProgress(event.data.run);
      default:
        return;
    }
  }

  private delta({ step, attempt, text }: { step: number; attempt: number; text: string }): void {
    const call = this.call;
    if (call !== undefined && call.step === step) {
      if (attempt < call.attempt) return;
      if (attempt > call.attempt) {
        if (call.text !== '') this.handlers.onRetry(attempt);
        this.call = { step, attempt, text: '' };
      }
    } else this.call = { step, attempt, text: '' };
    this.call!.text += text;
    this.handlers.onDelta(text);
  }
}

export class StreamingRunFollower implements RunFollower {
  private readonly reconnectForMs: number;
  private readonly idleMs: number;

  constructor(
    private readonly api: KeelApiClient,
    options: StreamingRunFollowerOptions = {},
  ) {
    this.reconnectForMs = options.reconnectForMs ?? 120_000;
    this.idleMs = options.idleMs ?? 30_000;
  }

  async follow(threadId: string, runId: string, handlers: RunFollowerHandlers): Promise<Run> {
    // `stream_mode=keel`: Keel's native event names (LangGraph's `values` is the default).
    const path = `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/stream?stream_mode=keel`;
    const view = new RunView(handlers);
    let failingSince: number | undefined;
    let delay = 200;
    while (!view.ended) {
      try {
        await this.read(path, view, () => {
          failingSince = undefined;
          delay = 200;
        });
        if (view.ended) break;
      } catch (error) {
        // A handler's own failure (the reader cannot answer an approval) is not the stream's.
        if (error instanceof HandlerFailed) throw error.cause;
        if (error instanceof ApiCallError && error.code === 'stream_cursor_expired') {
          // Events after our cursor were truncated away: go on from the oldest kept, and fill in
          // the messages the lost events carried at the end.
          handlers.onNotice('part of the stream was lost; the missing messages follow at the end');
          view.lostEvents = true;
          view.lastId = undefined;
          continue;
        }
        // Our own mistake or a missing thread/run will not heal by retrying.
        if (error instanceof ApiCallError && error.status !== undefined && error.status < 500) throw error;
      }
      failingSince ??= Date.now();
      if (Date.now() - failingSince > this.reconnectForMs)
        throw new ApiConnectionError(
          `lost the run's event stream at ${this.api.baseUrl} and could not reopen it for ${Math.round(this.reconnectForMs / 1000)}s`,
        );
      handlers.onReconnecting();
      await sleep(delay);
      delay = Math.min(delay * 2, 2_000);
    }
    if (view.lostEvents) {
      for (const message of await this.api.messages(threadId)) {
        if (message.run_id !== runId || message.role !== 'assistant' || view.shownMessages.has(message.id))
          continue;
        view.shownMessages.add(message.id);
        handlers.onMessage(message, false);
      }
    }
    return this.api.getRun(threadId, runId);
  }

  /** One connection: handles its events until `end`, or until it drops (throws or returns early). */
  private async read(path: string, view: RunView, onOpen: () => void): Promise<void> {
    const controller = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(), this.idleMs);
    };
    watch();
    try {
      const response = await this.api.openStream(path, view.lastId, controller.signal);
      onOpen();
      const pending: StreamEvent[] = [];
      const parser = createParser({
        onEvent: (message: EventSourceMessage) =>
          pending.push({
            ...(message.id === undefined || message.id === '' ? {} : { id: message.id }),
            event: message.event ?? 'message',
            data: JSON.parse(message.data) as unknown,
          }),
      });
      const decoder = new TextDecoder();
      const reader: ReadableStreamDefaultReader<Uint8Array> = response.body!.getReader();
      try {
        for (;;) {
          watch();
          const { done, value } = await reader.read();
          if (done) return;
          parser.feed(decoder.decode(value, { stream: true }));
          // Handlers may wait for a person (an approval): the silence meanwhile is not the API's.
          clearTimeout(idle);
          while (pending.length > 0) {
            await view.handle(pending.shift()!).catch((error: unknown) => {
              throw new HandlerFailed(error);
            });
            if (view.ended) return;
          }
        }
      } finally {
        controller.abort();
        reader.releaseLock();
      }
    } finally {
      clearTimeout(idle);
    }
  }
}
