/**
 * The activity contract: what the workflow asks of the outside world. The workflow proxies this
 * interface; `activities/` implements it.
 */
import type { AssistantSettings } from './assistants';
import type { AdmitQuotaRunInput, QuotaRunAdmission } from './quota';
import type { ToolFlags, ToolOutcome } from './tools';
import type { AssistantContent, ModelMessage, StopReason } from './transcript';
import { addUsage, type Usage, zeroUsage } from './usage';

export interface CallModelInput {
  thread_id: string;
  run_id: string;
  /** Model call index within the run, from 1. */
  step: number;
  /** `provider:model`. */
  model: string;
  system?: string;
  /**
   * The conversation so far. Absent when it is large (over `inlineMessagesLimit`): the activity
   * then reads it from the workflow (`getModelMessages`), so a long conversation is not written
   * into the history again at every step.
   */
  messages?: ModelMessage[];
  /**
   * When `messages` is absent: the messages appended since the model's previous call (its
   * answer and what followed it), when they are small. A worker that holds the first `from`
   * messages, read under the same `revision` for an earlier step, sends those and these without
   * asking the workflow; any other worker reads them all from the workflow. Absent from the
   * inputs of earlier releases, which every worker reads from the workflow.
   */
  appended?: AppendedMessages;
  /**
   * `false`: nobody waits for the answer's text token by token (see `SubmitInput.deltas`), so
   * none is published; the call then always brings its messages, and runs as a local activity.
   */
  deltas?: false;
  /**
   * What this call may spend at most, all its attempts together: what is left of the thread's
   * budget (decision 0425), since retried attempts are billed too and must not spend past it
   * together. The activity counts the input, lowers the answer's `max_tokens` to
   * fit, or refuses the call (`BudgetExceeded`). Absent when the thread has no limits.
   */
  budget?: ModelCallBudget;
  /** The thread has memory on (`ThreadConfig.memory`): the model is offered the memory tools. */
  memory?: true;
}

/** A model call's ceiling: tokens (every kind counted) and dollars, each when the thread limits it. */
export interface ModelCallBudget {
  tokens?: number;
  cost_usd?: number;
  /**
   * In a model call's input: the run's share of its owner's quota, not the thread's budget, is the
   * lesser cost ceiling (decision 0440), so a refusal names the quota, not the budget.
   */
  ceiling?: 'quota';
}

/**
 * What a model call's attempts spent, carried in its heartbeats from one attempt to the next and
 * in the first detail of its final failure, so the workflow's ledger keeps what was paid for
 * (decision 0425). `billed`: what the attempts that ended were billed, or may have been;
 * `reserved`: what the attempt in flight may spend at most. An attempt whose worker died never
 * says what it spent, so the next attempt (or the workflow) counts its reservation as spent.
 */
export interface ModelCallSpend {
  billed?: Usage;
  reserved?: Usage;
}

function usageIn(value: unknown): Usage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const keys = [
    'input_tokens',
    'output_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
    'cost_usd',
  ] as const;
  if (!keys.every((key) => typeof fields[key] === 'number' && Number.isFinite(fields[key]))) return undefined;
  return value as Usage;
}

/** Everything a model call's attempts spent, by what they carried (undefined when nothing). */
export function spentByAttempts(spend: unknown): Usage | undefined {
  if (typeof spend !== 'object' || spend === null) return undefined;
  const { billed, reserved } = spend as Record<string, unknown>;
  const parts = [usageIn(billed), usageIn(reserved)].filter((usage) => usage !== undefined);
  if (parts.length === 0) return undefined;
  return parts.reduce((sum, usage) => addUsage(sum, usage), zeroUsage);
}

/** Characters of JSON up to which a model call's messages travel inside its input. */
export const inlineMessagesLimit = 64 * 1024;

/** The last messages of a model call's conversation: `messages` from index `from` on. */
export interface AppendedMessages {
  from: number;
  /** The transcript's revision (`getStepMessages`'s): the same one means the same front. */
  revision: string;
  messages: ModelMessage[];
}

/**
 * Characters of JSON up to which a long conversation's model call brings the messages appended
 * since the previous call (`CallModelInput.appended`): a turn's question and the answer before
 * it, not a large tool output, which the activity reads from the workflow instead.
 */
export const appendedMessagesLimit = 16 * 1024;

export interface CallModelResult {
  content: AssistantContent[];
  stop_reason: StopReason;
  usage: Usage;
  /** The model that answered, as the provider names it. */
  model: string;
  /**
   * Flags of each tool the answer asks for, by name, from the worker's registry. A name that is
   * absent is a tool the worker does not know; the workflow answers it with an error result.
   */
  tools: Record<string, ToolFlags>;
  /**
   * Streamed text not yet published as a `message.delta` when the call ended: the workflow
   * publishes it just before the answer, which saves a round trip per call (and, for an answer
   * that arrives within one batch, the only one). Absent when everything was published.
   */
  unpublished_delta?: { attempt: number; text: string };
  /**
   * The live channel (decision 0340): the attempt whose text was streamed outside the history,
   * and that text when it is not the answer's (`textOf(content)`). The workflow logs it whole
   * with the answer, for streams that missed some of it.
   */
  streamed?: { attempt: number; text?: string };
}

/**
 * What a model call stopped by its workflow (the user's Stop) had received: the first detail of
 * the `CancelledFailure` it ends with. Text only: a tool call the model had begun is dropped.
 */
export interface StoppedModelCall {
  text: string;
  /**
   * The live channel (decision 0340): the attempt whose text streamed outside the history. The
   * workflow logs the stopped text whole, so a stream gets the characters it had not read.
   */
  streamed?: { attempt: number };
  /**
   * What the call's attempts were billed, or may have been, so a call that fails for good still
   * counts what was paid for (decision 0425).
   */
  billed?: Usage;
}

export interface RunToolInput {
  thread_id: string;
  run_id: string;
  tool_use_id: string;
  name: string;
  input: Record<string, unknown>;
  /** `workflowId:toolUseId`: a side-effecting tool may use it to make a repeat harmless. */
  idempotency_key: string;
  /** The thread's `network_hosts`, when it has any (the worker checks them again). */
  network_hosts?: string[];
  /**
   * The thread has memory on: whose store the memory tools read and write (the thread's owner,
   * `''` without API tokens). Absent, a memory tool answers that memory is off.
   */
  memory?: { owner: string };
}

/** One webhook delivery: the same `webhook_id` for every attempt, so receivers can drop repeats. */
export interface SendWebhookInput {
  url: string;
  webhook_id: string;
  /** Unix seconds the event happened (the `webhook-timestamp` of the first attempt's payload). */
  timestamp: number;
  /**
   * The JSON body: a run's webhook `{type, timestamp, data}` as Standard Webhooks suggests; an A2A
   * push notification the task as a `StreamResponse`, `{task}` (decision 0485).
   */
  payload:
    { type: string; timestamp: string; data: Record<string, unknown> } | { task: Record<string, unknown> };
  /** More headers (an A2A push's content type and token); the signature's headers win. */
  headers?: Record<string, string>;
  /** What the activity is called in the Temporal UI (`webhook <type>` without it). */
  summary?: string;
}

/**
 * What a tool call's heartbeats carry: the Temporal identity of the worker running it
 * (`pid@host live=<url>`), so that a call Temporal gives up on by its heartbeat timeout names its
 * worker, which Temporal's timeout itself does not (decision 0412).
 */
export interface ToolCallProgress {
  worker: string;
}

/** Whose worker to look for: a Temporal identity, as a tool call's heartbeats carried it. */
export interface CheckWorkerInput {
  identity: string;
}

/**
 * What became of a worker (decision 0412), so a tool result can tell a dead worker from a Temporal
 * outage. `running`: that very process answers at the endpoint
 * its identity advertises; `stopped`: nothing answers there, or another process does; `unknown`:
 * its identity advertises no endpoint, or one that cannot say (a release before this one).
 */
export type WorkerState = 'running' | 'stopped' | 'unknown';

export interface KeelActivities {
  callModel(input: CallModelInput): Promise<CallModelResult>;
  runTool(input: RunToolInput): Promise<ToolOutcome>;
  /**
   * Whether the worker that ran a tool call Temporal gave up on still runs: what tells a worker
   * that died from a Temporal service that stopped between it and the server.
   */
  checkWorker(input: CheckWorkerInput): Promise<WorkerState>;
  sendWebhook(input: SendWebhookInput): Promise<void>;
  /**
   * An assistant's latest settings (`configurable` and `context`, `context` winning), for a
   * workflow that starts an agent through it; fails `AssistantNotFound` (not retried).
   */
  resolveAssistant(input: { assistant_id: string }): Promise<AssistantSettings>;
  /**
   * Asks an owner's ledger, by update-with-start with the worker's quota, to admit a run that
   * comes from a workflow (a cron's fire, an agent a workflow starts), which never passes the
   * API's door: workflow code cannot send an update or start a workflow with one (decision 0480).
   */
  admitQuotaRun(input: AdmitQuotaRunInput): Promise<QuotaRunAdmission>;
}
