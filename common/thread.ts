import type { Usage } from './usage';

/**
 * Every thread is one workflow, and this is its id: `conversation-<thread_id>`. Defined here only,
 * for the API, the workflow (a child's parent, a parent's child), the tests and the benchmark.
 */
const workflowIdPrefix = 'conversation-';

export const workflowIdFor = (threadId: string): string => `${workflowIdPrefix}${threadId}`;

/** The thread a workflow id names, or undefined when the workflow is not a thread's. */
export const threadIdOf = (workflowId: string): string | undefined =>
  workflowId.startsWith(workflowIdPrefix) ? workflowId.slice(workflowIdPrefix.length) : undefined;

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
}
