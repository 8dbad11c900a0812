/**
 * Sub-agents, decided here: a `spawn_agent` call starts a child thread (`startChild`); the call
 * waits for the child's report up to its timeout (foreground), or is answered at once
 * (background). A child that outlives its wait goes on in the background, and its report then
 * becomes a continuation run of the run that spawned it. The interpreter starts the child,
 * keeps the timer and feeds back `childStarted`, `childWaitExpired` and `childCompleted`. What a
 * child's news comes to is a fact for the sequencer: an answer for the call that spawned it, or a
 * continuation run to queue.
 */
import { childOriginOf, type ChildCompleted } from '../../common/children';
import { runTerminalEvents } from '../../common/events';
import type { SubmitInput } from '../../common/messages';
import type { Run } from '../../common/run';
import type { ToolOutcome } from '../../common/tools';
import type { Usage } from '../../common/usage';
import { warnIfNear } from './budget';
import { rollUpChildUsage } from './child-usage';
import { emit } from './emit';
import { childOf } from './spawn';
import type { ChildRecord, ThreadState } from './state';
import type { Command, ConversationEvent, Transition } from './transitions';

type Event<T extends ConversationEvent['type']> = Extract<ConversationEvent, { type: T }>;

/**
 * What a child's news comes to, besides its own changes: `answer`, the result of the call that
 * spawned it; `continuation`, a run to queue with the report of a child that went on in the
 * background.
 */
export type SubAgentChange = Transition & { answer?: CallAnswer; continuation?: SubmitInput };

/** The result a call that spawned a child gets. */
export interface CallAnswer {
  run_id: string;
  tool_use_id: string;
  outcome: ToolOutcome;
}

const answerOf = (run: Run): string => run.output ?? run.error?.message ?? '(no answer)';

function withChild(state: ThreadState, childThreadId: string, child: ChildRecord | undefined): ThreadState {
  const others = (state.children ?? []).filter((candidate) => candidate.child_thread_id !== childThreadId);
  return { ...state, children: child === undefined ? others : [...others, child] };
}

/** A child's usage counts toward this thread's budget, warning here at 80 % like our own. */
export function childUsageReported(state: ThreadState, runId: string, usage: Usage, now: number): Transition {
  const rolled = rollUpChildUsage(state, runId, usage, now);
  const warned = warnIfNear(rolled.state, runId);
  return { state: warned.state, commands: [...rolled.commands, ...warned.commands] };
}

/**
 * On a child's side: every run that ends is reported to the parent (a finished child must not
 * outlive its one task, so it closes once the report went out: `parentReported`).
 */
export function reportsToParent(state: ThreadState, commands: readonly Command[]): Command[] {
  const origin = childOriginOf(state.thread.metadata);
  if (origin === undefined) return [];
  return commands.flatMap((command): Command[] =>
    command.type === 'emit' && runTerminalEvents.includes(command.event.event) && 'run' in command.event.data
      ? [
          {
            type: 'reportToParent',
            report: { ...origin, child_thread_id: state.thread.thread_id, run: command.event.data.run },
          },
        ]
      : [],
  );
}

/** The child's end is told on the stream, and its usage counts for the run that spawned it. */
function rollUp(state: ThreadState, runId: string, report: ChildCompleted, now: number): Transition {
  const rolled = childUsageReported(state, runId, report.run.usage, now);
  return {
    state: rolled.state,
    commands: [emit.childCompleted(runId, report.child_thread_id, report.run.status), ...rolled.commands],
  };
}

/** True while the call that spawned the child still waits for an answer. */
function callRuns(state: ThreadState, child: ChildRecord): boolean {
  const active = state.active;
  if (active?.run_id !== child.run_id || active.step.kind !== 'tools') return false;
  return active.step.calls.some((call) => call.use.id === child.tool_use_id && call.status === 'running');
}

const answer = (child: ChildRecord, outcome: ToolOutcome): CallAnswer => ({
  run_id: child.run_id,
  tool_use_id: child.tool_use_id,
  outcome,
});

/** The waiting call gets the child's answer. */
function answerCall(
  state: ThreadState,
  child: ChildRecord,
  report: ChildCompleted,
  now: number,
): SubAgentChange {
  const rolled = rollUp(withChild(state, child.child_thread_id, undefined), child.run_id, report, now);
  const content = `Sub-agent ${child.child_thread_id} ${report.run.status}: ${answerOf(report.run)}`;
  return { ...rolled, answer: answer(child, { is_error: report.run.status !== 'completed', content }) };
}

/** The call is answered now and the child goes on: its report will become a continuation run. */
function goOnInBackground(state: ThreadState, child: ChildRecord): SubAgentChange {
  const content = child.background
    ? `Sub-agent ${child.child_thread_id} started in the background; its result will arrive as a new turn.`
    : `Sub-agent ${child.child_thread_id} did not finish within ${child.wait_s} s; it continues in the background and its result will arrive as a new turn.`;
  const background = withChild(state, child.child_thread_id, { ...child, phase: 'background' });
  return { state: background, commands: [], answer: answer(child, { is_error: false, content }) };
}

/** The child runs with its task: a report that came first answers the call now. */
export function childStarted(state: ThreadState, event: Event<'childStarted'>): SubAgentChange {
  const child = childOf(state, event.child_thread_id);
  if (child === undefined || child.phase !== 'starting') return { state, commands: [] };
  const spawned = emit.childSpawned(child.run_id, child.child_thread_id, child.task);
  const next =
    child.report !== undefined
      ? answerCall(state, child, child.report, event.now)
      : child.wait_s <= 0
        ? goOnInBackground(state, child)
        : {
            state: withChild(state, child.child_thread_id, { ...child, phase: 'waiting' as const }),
            commands: [],
          };
  return { ...next, commands: [spawned, ...next.commands] };
}

/** The foreground wait ran out. */
export function childWaitExpired(state: ThreadState, event: Event<'childWaitExpired'>): SubAgentChange {
  const child = childOf(state, event.child_thread_id);
  if (child?.phase !== 'waiting') return { state, commands: [] };
  return goOnInBackground(state, child);
}

/**
 * Whether a child's report comes after the run that waited for it ended (cancelled, closed): its
 * answer has no call to go to, and no continuation run is made of it.
 */
export function isLateReport(state: ThreadState, report: ChildCompleted): boolean {
  const child = childOf(state, report.child_thread_id);
  if (child === undefined || child.report !== undefined) return false;
  return child.phase !== 'background' && !callRuns(state, child);
}

/** A child's report: it answers the waiting call, or becomes a continuation run. */
export function childCompleted(state: ThreadState, event: Event<'childCompleted'>): SubAgentChange {
  const { report, now } = event;
  const child = childOf(state, report.child_thread_id);
  if (child === undefined || child.report !== undefined) return { state, commands: [] };
  if (isLateReport(state, report)) {
    const unheld = withChild(state, child.child_thread_id, undefined);
    if (event.late_counted !== true) return { state: unheld, commands: [] };
    // Its answer is not used, but what it spent is: the thread's ledger keeps all that was billed.
    const rolled = rollUpChildUsage(unheld, child.run_id, report.run.usage, now);
    const told = emit.childCompleted(child.run_id, report.child_thread_id, report.run.status);
    return { state: rolled.state, commands: [told, ...rolled.commands] };
  }
  if (child.phase === 'starting')
    return { state: withChild(state, child.child_thread_id, { ...child, report }), commands: [] };
  if (child.phase === 'waiting') return answerCall(state, child, report, now);
  const rolled = rollUp(withChild(state, child.child_thread_id, undefined), child.run_id, report, now);
  const text =
    `Sub-agent ${report.child_thread_id} finished the task "${report.task}" (${report.run.status}). ` +
    `Its answer: ${answerOf(report.run)}`;
  return {
    ...rolled,
    continuation: {
      run_id: `${report.parent_run_id}.${report.tool_use_id}`,
      assistant_id: 'agent',
      content: [{ type: 'text', text }],
      multitask_strategy: 'enqueue',
      metadata: { child_thread_id: report.child_thread_id },
      continuation_of: report.parent_run_id,
    },
  };
}
