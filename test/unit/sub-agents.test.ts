/**
 * Sub-agents, as the reducer decides them: a `spawn_agent` call starts a child, waits for its
 * report in the foreground (or not at all in the background), and a report that comes after the
 * call was answered becomes a continuation run.
 */
import type { ChildCompleted } from '../../common/children';
import type { Run } from '../../common/run';
import { reduce } from '../../workflows/core/reducer';
import { type ThreadState, findRun, initialState } from '../../workflows/core/state';
import { afterFirstAnswer, t0, usage } from '../helpers/reducer';
import type { Command } from '../../workflows/core/transitions';

const spawnFlags = { sideEffects: true, sensitive: false };

function spawned(input: Record<string, unknown>): { state: ThreadState; commands: Command[] } {
  return afterFirstAnswer({
    content: [{ type: 'tool_use', id: 'u1', name: 'spawn_agent', input }],
    stop_reason: 'tool_use',
    usage,
    model: 'm',
    tools: { spawn_agent: spawnFlags },
  });
}

const report = (output: string): ChildCompleted => ({
  parent_thread_id: 't1',
  parent_run_id: 'r1',
  tool_use_id: 'u1',
  task: 'count',
  child_thread_id: 't1.u1',
  run: { run_id: 'task', status: 'completed', output, usage } as Run,
});

const names = (commands: Command[]) => commands.map((c) => (c.type === 'emit' ? c.event.event : c.type));
const lastToolResult = (state: ThreadState): string => {
  const message = state.transcript.at(-1);
  const block = message?.role === 'user' ? message.content[0] : undefined;
  return block?.type === 'tool_result' ? block.content : '';
};

describe('sub-agents in the reducer', () => {
  it('starts a child for spawn_agent and answers the call with its report when it comes in time', () => {
    const { state, commands } = spawned({ task: 'count', timeout_s: 5 });
    const start = commands.find((c) => c.type === 'startChild');
    expect(start).toMatchObject({
      child: { thread_id: 't1.u1', metadata: { keel_child_of: { task: 'count' } } },
      wait_ms: 5000,
    });
    // The child's first run is its task, decided here; the interpreter only sends it.
    expect(start).toMatchObject({
      first_run: {
        run_id: 'task',
        content: [{ type: 'text', text: 'count' }],
        multitask_strategy: 'enqueue',
      },
    });
    const started = reduce(state, { type: 'childStarted', now: t0 + 3, child_thread_id: 't1.u1' });
    expect(names(started.commands)).toEqual(['child.spawned']);
    const done = reduce(started.state, { type: 'childCompleted', now: t0 + 4, report: report('42 stars') });
    expect(names(done.commands)).toEqual([
      'child.completed',
      'usage.updated',
      'tool.completed',
      'message.completed',
      'message.started',
      'callModel',
    ]);
    expect(lastToolResult(done.state)).toBe('Sub-agent t1.u1 completed: 42 stars');
    expect(findRun(done.state, 'r1')?.usage.output_tokens).toBe(4);
  });

  it('lets a child that outlives its wait go on, and turns its report into a continuation run', () => {
    const { state } = spawned({ task: 'count', timeout_s: 1 });
    const started = reduce(state, { type: 'childStarted', now: t0 + 3, child_thread_id: 't1.u1' }).state;
    const expired = reduce(started, { type: 'childWaitExpired', now: t0 + 4, child_thread_id: 't1.u1' });
    expect(lastToolResult(expired.state)).toContain(
      'did not finish within 1 s; it continues in the background',
    );
    const answered = reduce(expired.state, {
      type: 'modelResponded',
      now: t0 + 5,
      run_id: 'r1',
      step: 2,
      result: {
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage,
        model: 'm',
        tools: {},
      },
    }).state;
    const reported = reduce(answered, { type: 'childCompleted', now: t0 + 6, report: report('42 stars') });
    expect(names(reported.commands)).toEqual([
      'child.completed',
      'usage.updated',
      'run.created',
      'run.started',
      'message.started',
      'callModel',
    ]);
    expect(findRun(reported.state, 'r1.u1')).toMatchObject({
      continuation_of: 'r1',
      metadata: { child_thread_id: 't1.u1' },
    });
    // The same report again changes nothing.
    expect(
      reduce(reported.state, { type: 'childCompleted', now: t0 + 7, report: report('42 stars') }).commands,
    ).toEqual([]);
  });

  it('counts what a child spent when its report comes after the run that spawned it was cancelled, and makes no run of it', () => {
    const { state } = spawned({ task: 'count', timeout_s: 60 });
    const started = reduce(state, { type: 'childStarted', now: t0 + 3, child_thread_id: 't1.u1' }).state;
    const cancelled = reduce(started, { type: 'cancelRequested', now: t0 + 4, run_id: 'r1' }).state;
    expect(findRun(cancelled, 'r1')?.status).toBe('cancelled');
    const spentBefore = findRun(cancelled, 'r1')!.usage.output_tokens;
    const late = { type: 'childCompleted' as const, now: t0 + 5, report: report('42 stars') };

    const counted = reduce(cancelled, { ...late, late_counted: true });
    expect(names(counted.commands)).toEqual(['child.completed', 'usage.updated']);
    expect(findRun(counted.state, 'r1')?.usage.output_tokens).toBe(spentBefore + usage.output_tokens);
    expect(counted.state.usage.output_tokens).toBe(cancelled.usage.output_tokens + usage.output_tokens);
    expect(counted.state.children ?? []).toEqual([]);
    expect(counted.state.runs.map((run) => run.run_id)).toEqual(['r1']);
    // A history from before the patch replays as it ran: the report dropped, spend and all.
    const dropped = reduce(cancelled, late);
    expect(dropped.commands).toEqual([]);
    expect(dropped.state.usage).toEqual(cancelled.usage);
  });

  it('answers a background call once the child has its task, and a call with no task at once', () => {
    const { state } = spawned({ task: 'count', background: true });
    const started = reduce(state, { type: 'childStarted', now: t0 + 3, child_thread_id: 't1.u1' });
    expect(lastToolResult(started.state)).toBe(
      'Sub-agent t1.u1 started in the background; its result will arrive as a new turn.',
    );
    const empty = spawned({ task: '' });
    expect(names(empty.commands)).not.toContain('startChild');
    expect(lastToolResult(empty.state)).toBe('spawn_agent needs a non-empty task');
  });

  it("reports a child's finished run to its parent, and closes the child once the report went out", () => {
    const origin = { parent_thread_id: 't0', parent_run_id: 'p1', tool_use_id: 'u9', task: 'count' };
    const child = initialState({
      thread_id: 't0.u9',
      metadata: { keel_child_of: origin },
      config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 60, max_steps: 5 },
      created_at: new Date(t0).toISOString(),
    });
    const input = {
      run_id: 'task',
      assistant_id: 'agent',
      content: [{ type: 'text' as const, text: 'count' }],
    };
    const started = reduce(child, {
      type: 'inputSubmitted',
      now: t0 + 1,
      input: { ...input, multitask_strategy: 'enqueue', metadata: {} },
    });
    expect(names(started.commands)).not.toContain('reportToParent');
    const answered = reduce(started.state, {
      type: 'modelResponded',
      now: t0 + 2,
      run_id: 'task',
      step: 1,
      result: {
        content: [{ type: 'text', text: '42' }],
        stop_reason: 'end_turn',
        usage,
        model: 'm',
        tools: {},
      },
    });
    expect(names(answered.commands).at(-1)).toBe('reportToParent');
    expect(answered.commands.at(-1)).toMatchObject({
      report: {
        ...origin,
        child_thread_id: 't0.u9',
        run: { run_id: 'task', status: 'completed', output: '42' },
      },
    });
    expect(reduce(answered.state, { type: 'parentReported', now: t0 + 3 }).state.closed).toBe(true);
  });
});
