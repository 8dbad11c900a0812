import type { Usage } from './usage';

/**
 * Every thread is one workflow, and this is its id: `conversation-<thread_id>`, or, for a thread
 * an API token's owner made, `conversation-<thread_id>~<scope>`, where the scope is a short hash
 * of the owner (decision 0160): ids are per owner, so two owners' `t1` are two threads and
 * neither learns of the other. Defined here only, for the API, the workflow (a child's parent, a
 * parent's child), the worker (a thread's workspace), the tests and the benchmark.
 */
const workflowIdPrefix = 'conversation-';
/** Between a thread id and its scope: never in a thread id (`idPattern`), so ids cannot collide. */
const scopeSeparator = '~';

export const workflowIdFor = (threadId: string, scope?: string): string =>
  scope === undefined
    ? `${workflowIdPrefix}${threadId}`
    : `${workflowIdPrefix}${threadId}${scopeSeparator}${scope}`;

/** The thread id and scope a workflow id is made of, or undefined when it is not a thread's. */
function partsOf(workflowId: string): { threadId: string; scope?: string } | undefined {
  if (!workflowId.startsWith(workflowIdPrefix)) return undefined;
  const rest = workflowId.slice(workflowIdPrefix.length);
  const at = rest.lastIndexOf(scopeSeparator);
  return at < 0 ? { threadId: rest } : { threadId: rest.slice(0, at), scope: rest.slice(at + 1) };
}

/** The thread a workflow id names, or undefined when the workflow is not a thread's. */
export const threadIdOf = (workflowId: string): string | undefined => partsOf(workflowId)?.threadId;

/**
 * The owner scope in a thread's workflow id; undefined for a thread made without API tokens, by
 * another workflow's agent, or before ids were scoped. A thread's children share its scope.
 */
export const scopeOf = (workflowId: string): string | undefined => partsOf(workflowId)?.scope;

/**
 * The name a thread's workspace directory has: its thread id, scoped as its workflow id is, so
 * two owners' threads of the same id never share one.
 */
export const workspaceNameOf = (threadId: string, scope: string | undefined): string =>
  workflowIdFor(threadId, scope).slice(workflowIdPrefix.length);

/** Thread status, as LangGraph Platform names it, plus `closed`. Also the `KeelStatus` search attribute. */
export const ThreadStatus = {
  idle: 'idle',
  busy: 'busy',
  interrupted: 'interrupted',
  error: 'error',
  closed: 'closed',
} as const;
export type ThreadStatus = (typeof ThreadStatus)[keyof typeof ThreadStatus];

export const ApprovalMode = { auto: 'auto', require: 'require' } as const;
export type ApprovalMode = (typeof ApprovalMode)[keyof typeof ApprovalMode];

/**
 * A per-tool rule that wins over the approval mode: `allow` runs without asking, `ask` always
 * asks (even under `auto`), `deny` never runs (the model gets an error result saying so).
 */
export const ToolRule = { allow: 'allow', ask: 'ask', deny: 'deny' } as const;
export type ToolRule = (typeof ToolRule)[keyof typeof ToolRule];

/** Per-thread settings, fixed at creation unless an update changes them. */
export interface ThreadConfig {
  /** `provider:model`, e.g. `anthropic:claude-sonnet-4-6` or `scripted:demo`. */
  model: string;
  system?: string;
  approval: ApprovalMode;
  /** Seconds a sensitive tool waits for a decision. @default 300 */
  approval_timeout_s: number;
  /** Rules by tool name that win over `approval`. @default {} */
  tool_rules?: Record<string, ToolRule>;
  max_tokens?: number;
  max_cost_usd?: number;
  /** Model calls one run may make before it stops. @default 50 */
  max_steps: number;
  /**
   * Hosts the thread's commands may reach through Keel's proxy (`host`, `*.domain`,
   * `host:port`), within what the operator allows (`KEEL_SANDBOX_NETWORK_HOSTS`). @default none
   */
  network_hosts?: string[];
  /**
   * The memory tools (`remember`, `recall`, `forget`) on the owner's store namespace
   * `["memories"]` (decision 0450). @default false
   */
  memory?: boolean;
}

/** What a thread amounted to so far: runs, model calls, tokens, cost, time. */
export interface ThreadSummary {
  runs: number;
  steps: number;
  tokens: number;
  cost_usd: number;
  /** Milliseconds spent inside runs. */
  duration_ms: number;
}

export interface Thread {
  thread_id: string;
  owner?: string;
  status: ThreadStatus;
  metadata: Record<string, unknown>;
  config: ThreadConfig;
  created_at: string;
  updated_at: string;
  usage: Usage;
  summary: ThreadSummary;
  active_run_id?: string;
  queued_run_ids: string[];
  messages_count: number;
  /** Where its budget stands, when it has one or its run has a share of its owner's quota. */
  budget?: ThreadBudget;
}

/**
 * What a thread's budget says now (decisions 0425, 0440): what it spent; what its sub-agents
 * hold (their shares, not yet reported); and what its next model call may spend at most — what
 * is left of its limits and of its active run's share of the owner's quota, the lesser.
 */
export interface ThreadBudget {
  spent: { tokens: number; cost_usd: number };
  reserved: { tokens: number; cost_usd: number };
  left: { tokens?: number; cost_usd?: number };
}
