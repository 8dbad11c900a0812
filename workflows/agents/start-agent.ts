/**
 * Start a Keel agent from any workflow: as a child workflow on Keel's task queue, running one
 * task (plus any follow-up messages) and returning a typed result. Deterministic code only; the
 * caller's worker needs no Keel activities, only Keel's data converter when Keel encrypts payloads.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  type ChildWorkflowHandle,
  ChildWorkflowFailure,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  patched,
  type SignalDefinition,
  proxyActivities,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import {
  AgentFailureType,
  agentWorkflowType,
  defaultAgentTaskQueue,
  type AgentFinished,
  type AgentInput,
  type AgentParentClosePolicy,
  type AgentConfig,
  type AgentResult,
} from '../../common/agents';
import type { KeelActivities } from '../../common/activities';
import type { DecideApprovalInput } from '../../common/approvals';
import * as messages from '../../common/messages';
import { callerQuotaWorkflowId, quotaKey, type RunQuota } from '../../common/quota';
import { FailureType } from '../../common/failures';
import { isTerminal } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import { workflowIdFor } from '../../common/thread';
import type { UserContent } from '../../common/transcript';
import { zeroUsage } from '../../common/usage';
import type { conversationWorkflow } from '../interpreter/workflow';
import { agentQuotaPatch } from '../interpreter/patches';
import { agentInputProblem, conversationFor } from './agent-input';
import { checkOutput, schemaFor } from './structured-output';

const parentClosePolicies: Record<AgentParentClosePolicy, ParentClosePolicy> = {
  cancel: ParentClosePolicy.REQUEST_CANCEL,
  abandon: ParentClosePolicy.ABANDON,
  terminate: ParentClosePolicy.TERMINATE,
};

/** Talks to a running agent: follow-up messages, approvals, cancel. Works from any workflow. */
export class AgentRef {
  constructor(readonly threadId: string) {}

  get workflowId(): string {
    return workflowIdFor(this.threadId);
  }

  /**
   * Sends a follow-up message; it runs after the current run. Returns its run id. Throws
   * `AgentClosed` once the agent has closed (no run was left, or it was cancelled). A message
   * that reaches the agent while it closes is refused there: the thread shows it as a failed run
   * (`thread_closed`) and the agent's result leaves it out.
   */
  async send(text: string): Promise<string> {
    const run_id = `message-${uuid4()}`;
    await this.#signal('send a message to', messages.userMessageSignal, {
      run_id,
      assistant_id: 'agent',
      content: [{ type: 'text', text }],
      multitask_strategy: 'enqueue',
      metadata: {},
    });
    return run_id;
  }

  /**
   * Approves or denies a pending tool call. Throws `AgentClosed` once the agent has closed; an
   * id the running agent does not know, or has decided already, is ignored by it (a signal gets
   * no answer; the API's update form refuses such ids).
   */
  async decideApproval(decision: DecideApprovalInput): Promise<void> {
    await this.#signal('decide an approval of', messages.approvalSignal, decision);
  }

  /**
   * Ends the agent: its current run is cancelled (tools see why), and its result says
   * `cancelled`. Throws `AgentClosed` when it has closed already.
   */
  async cancel(reason = 'cancelled by the workflow that started it'): Promise<void> {
    await this.#signal('cancel', messages.closeSignal, { reason });
  }

  async #signal<Args extends unknown[]>(
    what: string,
    signal: SignalDefinition<Args>,
    ...args: Args
  ): Promise<void> {
    try {
      await getExternalWorkflowHandle(this.workflowId).signal(signal, ...args);
    } catch (error) {
      // The caller's own cancellation stays one. Otherwise the server found no open workflow to
      // signal (its other refusal, too many signals, also means nothing reaches the agent now).
      if (isCancellation(error)) throw error;
      throw ApplicationFailure.create({
        type: AgentFailureType.agentClosed,
        message: `cannot ${what} agent ${this.threadId}: it has closed (or never started)`,
        nonRetryable: true,
        ...(error instanceof Error ? { cause: error } : {}),
      });
    }
  }
}

/** An agent this workflow started as its child: an `AgentRef` that can also await the result. */
export class AgentHandle<Output = unknown> extends AgentRef {
  readonly #child: ChildWorkflowHandle<typeof conversationWorkflow>;
  readonly #outputSchema: Record<string, unknown> | undefined;

  constructor(
    threadId: string,
    child: ChildWorkflowHandle<typeof conversationWorkflow>,
    outputSchema: Record<string, unknown> | undefined,
  ) {
    super(threadId);
    this.#child = child;
    this.#outputSchema = outputSchema;
  }

  /** Resolves once the agent has no run left to do. Failures of the agent are results, not throws. */
  async result(): Promise<AgentResult<Output>> {
    try {
      const outcome = await this.#child.result();
      return agentResult<Output>(outcome.agent ?? unfinished(this.threadId), this.#outputSchema);
    } catch (error) {
      // The caller's own cancellation stays a cancellation; the agent's failure becomes a result.
      if (!(error instanceof ChildWorkflowFailure) || CancellationScope.current().consideredCancelled)
        throw error;
      const cause = error.cause;
      return {
        thread_id: this.threadId,
        status: 'failed',
        error: {
          type:
            cause instanceof ApplicationFailure && typeof cause.type === 'string'
              ? (cause.type as never)
              : 'InternalError',
          message: cause?.message ?? error.message,
        },
        usage: zeroUsage,
        runs: 0,
      };
    }
  }
}

const unfinished = (threadId: string): AgentFinished => ({
  thread_id: threadId,
  status: 'cancelled',
  usage: zeroUsage,
  runs: 0,
});

/** The caller's view of what the agent did, with the answer checked against `output_schema`. */
export function agentResult<Output>(
  finished: AgentFinished,
  outputSchema: Record<string, unknown> | undefined,
): AgentResult<Output> {
  const base = {
    thread_id: finished.thread_id,
    usage: finished.usage,
    runs: finished.runs,
    ...(finished.output === undefined ? {} : { answer: finished.output }),
    ...(finished.status_reason === undefined ? {} : { status_reason: finished.status_reason }),
  };
  const status = isTerminal(finished.status) ? finished.status : 'cancelled';
  if (status !== 'completed')
    return { ...base, status, ...(finished.error === undefined ? {} : { error: finished.error }) };
  const schema = outputSchema === undefined ? undefined : schemaFor(outputSchema);
  if (schema === undefined || typeof schema === 'string') return { ...base, status };
  const checked = checkOutput<Output>(finished.output, schema);
  if (checked.ok) return { ...base, status, output: checked.output };
  return {
    ...base,
    status: 'failed',
    error: { type: AgentFailureType.structuredOutputInvalid, message: checked.message },
  };
}

function firstLine(content: UserContent[]): string {
  const text = content.map((block) => ('text' in block ? block.text : '')).join(' ');
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/**
 * The assistant's settings under the caller's: read by an activity on Keel's task queue (workflow
 * code cannot query the assistant's workflow), run by Keel's worker.
 */
async function withAssistant(input: AgentInput): Promise<AgentInput> {
  if (input.assistant_id === undefined || input.assistant_id === 'agent') return input;
  const { resolveAssistant } = proxyActivities<KeelActivities>({
    taskQueue: input.task_queue ?? defaultAgentTaskQueue,
    startToCloseTimeout: '30 seconds',
  });
  try {
    const settings = await resolveAssistant({ assistant_id: input.assistant_id });
    const defined = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
    return { ...input, config: { ...(defined as AgentConfig), ...input.config } };
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === AgentFailureType.assistantNotFound)
      throw ApplicationFailure.create({ type: cause.type, message: cause.message, nonRetryable: true });
    throw error;
  }
}

/**
 * The agent's task admitted by its caller's quota (decision 0480): the ledger of the workflow it
 * reports to, or of the one that asked for it (`quota_owner`, which the Nexus door sets, or the
 * parent). Refused, nothing starts: a non-retryable `QuotaExceeded` or `ConcurrencyLimit`
 * failure whose details say when to retry. Undefined without a quota (or before the patch).
 */
async function admitTask(input: AgentInput, threadWorkflowId: string): Promise<RunQuota | undefined> {
  if (!patched(agentQuotaPatch)) return undefined;
  const { admitQuotaRun } = proxyActivities<KeelActivities>({
    taskQueue: input.task_queue ?? defaultAgentTaskQueue,
    startToCloseTimeout: '30 seconds',
    retry: { maximumInterval: '10 seconds' },
  });
  const ledger = callerQuotaWorkflowId(input.quota_owner ?? input.report_to ?? workflowInfo().workflowId);
  const admission = await admitQuotaRun({ ledger, key: quotaKey(threadWorkflowId, 'task') });
  if (!admission.admitted)
    throw ApplicationFailure.create({
      type:
        admission.reason === 'concurrency' ? AgentFailureType.concurrencyLimit : FailureType.quotaExceeded,
      message: admission.message,
      nonRetryable: true,
      details: [{ reason: admission.reason, retry_after_s: admission.retry_after_s }],
    });
  return admission.quota === undefined ? undefined : { ...admission.quota, ledger };
}

/**
 * Starts an agent as a child of the calling workflow and hands its task over. Throws a
 * non-retryable `ApplicationFailure` of type `AgentConfigInvalid` when the input cannot start one,
 * `AssistantNotFound` when `assistant_id` names no assistant, or `QuotaExceeded` /
 * `ConcurrencyLimit` when its caller's quota refuses it (decision 0480).
 */
export async function startAgent<Output = unknown>(given: AgentInput): Promise<AgentHandle<Output>> {
  const input = await withAssistant(given);
  const problem = agentInputProblem(input);
  if (problem !== undefined)
    throw ApplicationFailure.create({
      type: AgentFailureType.agentConfigInvalid,
      message: problem,
      nonRetryable: true,
    });
  const parent = workflowInfo().workflowId;
  const threadId = input.thread_id ?? `${parent}.agent-${uuid4()}`;
  const quota = await admitTask(input, workflowIdFor(threadId));
  const made = conversationFor(input, threadId, parent, Date.now());
  const conversation =
    quota === undefined || made.task === undefined
      ? made
      : { ...made, task: { ...made.task, input: { ...made.task.input, quota } } };
  const policy = input.parent_close_policy ?? 'cancel';
  const child = await startChild<typeof conversationWorkflow>(agentWorkflowType, {
    workflowId: workflowIdFor(threadId),
    taskQueue: input.task_queue ?? defaultAgentTaskQueue,
    args: [conversation],
    parentClosePolicy: parentClosePolicies[policy],
    // An abandoned agent outlives the caller's cancellation as well as its close.
    ...(policy === 'abandon' ? { cancellationType: ChildWorkflowCancellationType.ABANDON } : {}),
    memo: { metadata: conversation.metadata, created_at: conversation.created_at },
    staticSummary: `Agent: ${firstLine(conversation.task?.input.content ?? [])}`,
    staticDetails: [
      `Keel agent started by workflow \`${parent}\``,
      `- thread: \`${threadId}\``,
      `- model: \`${conversation.config.model}\``,
    ].join('\n'),
    typedSearchAttributes: [
      { key: searchAttributes.status, value: 'busy' },
      { key: searchAttributes.owner, value: input.owner ?? 'local' },
      { key: searchAttributes.model, value: conversation.config.model },
      { key: searchAttributes.costUsd, value: 0 },
      { key: searchAttributes.turns, value: 0 },
    ],
  });
  return new AgentHandle<Output>(threadId, child, input.output_schema);
}

/** Starts an agent and waits for its result. */
export async function runAgent<Output = unknown>(input: AgentInput): Promise<AgentResult<Output>> {
  const agent = await startAgent<Output>(input);
  return agent.result();
}

/** A handle on an agent started earlier (before a continue-as-new, or by another workflow). */
export function getAgentRef(threadId: string): AgentRef {
  return new AgentRef(threadId);
}
