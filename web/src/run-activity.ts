/**
 * What the thread's `custom` events say beyond the messages: tools running, decisions waiting,
 * sub-agents, usage and budgets. Every event names what it is about by id, so replaying a stream
 * from its start (a reload, a re-attach) rebuilds the same activity.
 */
import { decisionRequested, type PendingDecision } from './approvals';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cost_usd: number;
}

export type ToolStatus = 'running' | 'ok' | 'error';

export interface ToolActivity {
  id: string;
  name: string;
  args: Record<string, unknown>;
  status: ToolStatus;
  result?: string;
}

export type DecisionState =
  { status: 'pending' } | { status: 'sending' } | { status: 'approve' | 'deny' | 'timeout'; reason?: string };

export type DecisionActivity = PendingDecision & DecisionState;

export interface ChildActivity {
  threadId: string;
  task: string;
  status: string;
}

export interface BudgetNotice {
  kind: 'warning' | 'exceeded';
  usage: Usage;
  limit: { max_tokens?: number; max_cost_usd?: number };
}

export interface RunActivity {
  tools: Record<string, ToolActivity>;
  decisions: Record<string, DecisionActivity>;
  children: Record<string, ChildActivity>;
  usage?: { run: Usage; thread: Usage };
  budget?: BudgetNotice;
}

export const noActivity: RunActivity = { tools: {}, decisions: {}, children: {} };

/** A Keel event as `custom` carries it (`{event, data}`), or something the page itself noted. */
export type ActivityEvent =
  | { event: string; data: Record<string, unknown> }
  | { event: 'page.decisions'; data: { pending: PendingDecision[] } }
  | { event: 'page.deciding'; data: { id: string; state: DecisionState } }
  | { event: 'page.usage'; data: { run?: Usage; thread: Usage } }
  | { event: 'page.sent'; data: Record<string, never> };

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function applyActivity(activity: RunActivity, { event, data }: ActivityEvent): RunActivity {
  switch (event) {
    case 'tool.started': {
      const id = text(data.tool_use_id);
      const args = (data.input ?? {}) as Record<string, unknown>;
      return {
        ...activity,
        tools: { ...activity.tools, [id]: { id, name: text(data.name), args, status: 'running' } },
      };
    }
    case 'tool.completed': {
      const id = text(data.tool_use_id);
      const started = activity.tools[id] ?? { id, name: text(data.name), args: {} };
      const done: ToolActivity = {
        ...started,
        status: data.is_error === true ? 'error' : 'ok',
        result: text(data.content),
      };
      return { ...activity, tools: { ...activity.tools, [id]: done } };
    }
    case 'approval.requested': {
      const pending = decisionRequested(data as unknown as Parameters<typeof decisionRequested>[0]);
      if (activity.decisions[pending.id] !== undefined) return activity;
      return {
        ...activity,
        decisions: { ...activity.decisions, [pending.id]: { ...pending, status: 'pending' } },
      };
    }
    case 'approval.resolved': {
      const id = text(data.approval_id);
      const asked = activity.decisions[id];
      if (asked === undefined) return activity;
      const decision = text(data.decision) as 'approve' | 'deny' | 'timeout';
      const resolved: DecisionActivity = {
        ...asked,
        status: decision,
        ...(typeof data.reason === 'string' ? { reason: data.reason } : {}),
      };
      return { ...activity, decisions: { ...activity.decisions, [id]: resolved } };
    }
    case 'page.decisions': {
      const decisions = { ...activity.decisions };
      for (const pending of (data as { pending: PendingDecision[] }).pending)
        decisions[pending.id] ??= { ...pending, status: 'pending' };
      return { ...activity, decisions };
    }
    case 'page.deciding': {
      const { id, state } = data as { id: string; state: DecisionState };
      const asked = activity.decisions[id];
      // A resolution that already arrived on the stream wins over the page's own note.
      if (asked === undefined || (asked.status !== 'pending' && asked.status !== 'sending')) return activity;
      return {
        ...activity,
        decisions: { ...activity.decisions, [id]: { ...asked, ...state } },
      };
    }
    case 'usage.updated':
      return { ...activity, usage: { run: data.usage as Usage, thread: data.thread_usage as Usage } };
    case 'page.sent': {
      // A new run: its usage starts from nothing; the thread's stays as it was. Earlier runs'
      // tools are in the thread's messages (or, after an edit, on a branch no longer shown).
      const { budget: _budget, ...rest } = activity;
      return {
        ...rest,
        tools: {},
        ...(activity.usage === undefined ? {} : { usage: { run: zero, thread: activity.usage.thread } }),
      };
    }
    case 'page.usage': {
      const { run, thread } = data as { run?: Usage; thread: Usage };
      return { ...activity, usage: { run: run ?? activity.usage?.run ?? zero, thread } };
    }
    case 'budget.warning':
    case 'budget.exceeded':
      return {
        ...activity,
        budget: {
          kind: event === 'budget.warning' ? 'warning' : 'exceeded',
          usage: data.usage as Usage,
          limit: data.limit ?? {},
        },
      };
    case 'child.spawned': {
      const threadId = text(data.child_thread_id);
      const child = { threadId, task: text(data.task), status: 'running' };
      return { ...activity, children: { ...activity.children, [threadId]: child } };
    }
    case 'child.completed': {
      const threadId = text(data.child_thread_id);
      const child = activity.children[threadId] ?? { threadId, task: '', status: '' };
      return {
        ...activity,
        children: { ...activity.children, [threadId]: { ...child, status: text(data.status) } },
      };
    }
    default:
      return activity;
  }
}

const zero: Usage = { input_tokens: 0, output_tokens: 0, cost_usd: 0 };
