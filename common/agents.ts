/**
 * Agents started by other workflows: what a caller gives (`AgentInput`), what it gets back
 * (`AgentResult`), and the names a caller needs to reach a Keel agent (workflow type, task queue,
 * id scheme), defined once. The helpers that use them live in `workflows/agents/`.
 */
import { defineSignal } from '@temporalio/workflow';
import type { FailureType } from './failures';
import type { SubmitInput } from './messages';
import type { RunError, RunStatus, StatusReason } from './run';
import { threadIdOf, workflowIdFor, type ApprovalMode, type ToolRule } from './thread';
import type { AssistantContent, ModelMessage, UserContent } from './transcript';
import type { Usage } from './usage';

/** The workflow type every Keel agent (thread) runs as. */
export const agentWorkflowType = 'conversationWorkflow';

/** The task queue Keel's workers poll unless `KEEL_TASK_QUEUE` says otherwise. @default 'keel' */
export const defaultAgentTaskQueue = 'keel';

/** An agent's workflow id from its thread id (`conversation-<thread_id>`), and back. */
export { workflowIdFor as agentWorkflowIdFor, threadIdOf };

/** The agent's settings; what is absent takes the default shown. */
export interface AgentConfig {
  /** `provider:model`, e.g. `anthropic:claude-sonnet-4-5` or `scripted:demo`. Required unless the assistant names one. */
  model?: string;
  system?: string;
  /** `require` asks a human before sensitive tools run. @default 'auto' */
  approval?: ApprovalMode;
  /** Seconds a sensitive tool waits for a decision. @default 300 */
  approval_timeout_s?: number;
  /** Rules by tool name (`allow`, `ask`, `deny`) that win over `approval`. */
  tool_rules?: Record<string, ToolRule>;
  max_tokens?: number;
  max_cost_usd?: number;
  /** Model calls the agent may make per run. @default 50 */
  max_steps?: number;
}

/** What happens to the agent when its parent closes (completes, fails, is cancelled or continues as new). */
export const AgentParentClosePolicy = {
  /** The agent's run is cancelled and the agent closes. The default. */
  cancel: 'cancel',
  /** The agent goes on by itself (a parent that continues as new wants this: see `report_to`). */
  abandon: 'abandon',
  terminate: 'terminate',
} as const;
export type AgentParentClosePolicy = (typeof AgentParentClosePolicy)[keyof typeof AgentParentClosePolicy];

/**
 * One message of a conversation the caller already had, in the transcript's shape (Anthropic's):
 * text, or content blocks. An assistant's `tool_use` is answered by `tool_result`s in the next
 * user message, as every model API requires.
 */
export type AgentMessage =
  | { role: 'user'; content: string | UserContent[] }
  | { role: 'assistant'; content: string | AssistantContent[] };

/**
 * What the agent is asked: a task, or a conversation so far. Give one of the two; the type
 * refuses both or neither, and so does the check at start (`AgentConfigInvalid`).
 */
export type AgentPrompt =
  | {
      /** The task: the agent's first user message (text, or content blocks). */
      task: string | UserContent[];
      messages?: never;
    }
  | {
      /**
       * The conversation so far, oldest first: user and assistant turns alternating, from a user
       * message to the last, which must be text. The earlier messages start the agent's
       * transcript (the model sees them, the thread shows them); the last is its first run.
       */
      messages: AgentMessage[];
      task?: never;
    };

/** What a workflow gives to start an agent: a task or messages, and settings. */
export type AgentInput = AgentPrompt & AgentOptions;

/** Everything in `AgentInput` but the prompt. */
export interface AgentOptions {
  /** Settings; each one given wins over the assistant's. */
  config?: AgentConfig;
  /**
   * An assistant made through the API (`POST /assistants`): its latest settings configure the
   * agent. An unknown one fails the start with `AssistantNotFound`. @default none
   */
  assistant_id?: string;
  /** The agent's thread id. @default `<parent workflow id>.agent-<uuid>` (deterministic) */
  thread_id?: string;
  /**
   * A JSON Schema the agent's answer must satisfy: the agent is told to answer with JSON, and
   * the result's `output` holds the parsed value, or the result fails `StructuredOutputInvalid`.
   */
  output_schema?: Record<string, unknown>;
  /** The thread's owner, as the API's tokens name them (who sees it through the API). @default 'local' */
  owner?: string;
  metadata?: Record<string, unknown>;
  /** @default 'keel' */
  task_queue?: string;
  /** @default 'cancel' */
  parent_close_policy?: AgentParentClosePolicy;
  /**
   * A workflow id that receives `agentFinished` when the agent is done: how a parent that
   * continues as new (and so cannot await its child) learns the result. @default none
   */
  report_to?: string;
  /**
   * Whose quota the agent's task is admitted by, when the operator configured one (decision 0480):
   * a key of the caller's choosing. @default `report_to`, else the workflow that starts the agent
   * (the Nexus door: the workflow that called the operation)
   */
  quota_owner?: string;
}

/** Why an agent's result is not a plain answer, beyond the run's own error types. */
export const AgentFailureType = {
  /** The answer is not JSON, or not JSON the caller's schema accepts. */
  structuredOutputInvalid: 'StructuredOutputInvalid',
  /** The input cannot start an agent (empty task, messages of a bad shape, unknown provider, bad budget, bad schema). */
  agentConfigInvalid: 'AgentConfigInvalid',
  /** `assistant_id` names no assistant (or a deleted one). */
  assistantNotFound: 'AssistantNotFound',
  /**
   * Thrown by `send`, `decideApproval` and `cancel` when the agent has closed (its task is done,
   * it was cancelled) or never existed: nothing can reach it any more.
   */
  agentClosed: 'AgentClosed',
  /** The caller's quota has as many runs under way as it allows (decision 0480); details: `retry_after_s`. */
  concurrencyLimit: 'ConcurrencyLimit',
} as const;
export type AgentFailureType = (typeof AgentFailureType)[keyof typeof AgentFailureType];

export interface AgentError {
  type: FailureType | AgentFailureType;
  message: string;
}

/** What the agent amounted to, for its caller. */
export interface AgentResult<Output = unknown> {
  thread_id: string;
  /** `completed` only when the agent answered (and the answer passed `output_schema`, if given). */
  status: Extract<RunStatus, 'completed' | 'failed' | 'cancelled'>;
  status_reason?: StatusReason;
  /** The agent's final answer, as text. */
  answer?: string;
  /** The answer parsed and validated against `output_schema`. */
  output?: Output;
  error?: AgentError;
  /** Tokens and dollars the agent spent, its own sub-agents included. */
  usage: Usage;
  /** Runs the agent made (the task plus any follow-up messages). */
  runs: number;
}

/** What a conversation started as a task carries (`ConversationInput.task`). */
export interface ConversationTask {
  /** Submitted as the thread's first run when the workflow starts. */
  input: SubmitInput;
  /** Messages the caller had before the first run (`AgentInput.messages`): the transcript's start. */
  earlier?: ModelMessage[];
  /** See `AgentInput.report_to`. */
  report_to?: string;
}

/** What a task conversation reports when it ends: the last run it made, and all it spent. */
export interface AgentFinished {
  thread_id: string;
  status: RunStatus;
  status_reason?: StatusReason;
  output?: string;
  error?: RunError;
  usage: Usage;
  runs: number;
}

/** Sent to `report_to` when the agent is done. */
export const agentFinishedSignal = defineSignal<[AgentFinished]>('agentFinished');
