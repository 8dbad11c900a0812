import type { CallModelResult } from '../../common/activities';
import type { ThreadConfig } from '../../common/thread';
import { findTranscriptViolation } from '../../common/transcript';
import { pendingApprovals } from '../../workflows/core/approvals';
import { reduce } from '../../workflows/core/reducer';
import { type ThreadState, threadStatus } from '../../workflows/core/state';
import { modelMessages } from '../../workflows/core/transcript';
import type { Command, ConversationEvent } from '../../workflows/core/transitions';
import { currentDetails, resumeCommands } from '../../workflows/core/views';
import { freshThread, t0 } from '../helpers/reducer';

const sensitive = { sideEffects: true, sensitive: true };
const readOnly = { sideEffects: false, sensitive: false };
const usage = (tokens: number, cost = 0) => ({
  input_tokens: tokens,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cost_usd: cost,
});

const fresh = (config: Partial<ThreadConfig> = {}): ThreadState =>
  freshThread({ approval: 'require', approval_timeout_s: 60, max_steps: 10, ...config });

const submit = (run_id: string, now = t0 + 1): ConversationEvent => ({
  type: 'inputSubmitted',
  now,
  input: {
    run_id,
    assistant_id: 'agent',
    content: [{ type: 'text', text: 'go' }],
    multitask_strategy: 'enqueue',
    metadata: {},
  },
});
const toolsReply = (tokens = 10, ...names: string[]): CallModelResult => ({
  content: names.map((name, index) => ({ type: 'tool_use', id: `u${index + 1}`, name, input: { n: index } })),
  stop_reason: 'tool_use',
  usage: usage(tokens),
  model: 'scripted-demo',
  tools: { bash: sensitive, read_file: readOnly, delete_file: sensitive },
});
const textReply = (tokens = 10): CallModelResult => ({
  content: [{ type: 'text', text: 'done' }],
  stop_reason: 'end_turn',
  usage: usage(tokens),
  model: 'scripted-demo',
  tools: {},
});
const responded = (
  run_id: string,
  step: number,
  result: CallModelResult,
  now = t0 + 2,
): ConversationEvent => ({
  type: 'modelResponded',
  now,
  run_id,
  step,
  result,
});

/** Run r1's first model call failed with `error`, its attempts billed `billed`. */
const modelFailed = (
  error: { type: string; message: string },
  billed: ReturnType<typeof usage>,
): ConversationEvent => ({ type: 'modelFailed', now: t0 + 3, run_id: 'r1', step: 1, error, billed });

const toolDone = (run_id: string, now: number, content = 'x'): ConversationEvent => ({
  type: 'toolFinished',
  now,
  run_id,
  tool_use_id: 'u1',
  outcome: { content, is_error: false },
});

let commands: Command[] = [];
function play(events: ConversationEvent[], from: ThreadState): ThreadState {
  commands = [];
  return events.reduce((state, event) => {
    const transition = reduce(state, event);
    expect(findTranscriptViolation(modelMessages(transition.state))).toBeUndefined();
    commands.push(...transition.commands);
    return transition.state;
  }, from);
}
const kinds = () => commands.map((command) => (command.type === 'emit' ? command.event.event : command.type));
const run = (state: ThreadState, id = 'r1') => state.runs.find((candidate) => candidate.run_id === id)!;

describe('approvals in the reducer', () => {
  it('holds a sensitive call for approval under require, runs read-only calls at once, and marks the run', () => {
    const state = play([submit('r1'), responded('r1', 1, toolsReply(10, 'bash', 'read_file'))], fresh());
    expect(kinds()).toContain('approval.requested');
    expect(
      commands.filter((c) => c.type === 'runTool').map((c) => c.type === 'runTool' && c.use.name),
    ).toEqual(['read_file']);
    expect(commands).toContainEqual({
      type: 'startApprovalTimer',
      approval_id: 'r1.1.1',
      expires_at_ms: t0 + 2 + 60_000,
    });
    expect(run(state).status_reason).toBe('awaiting_approval');
    expect(threadStatus(state)).toBe('interrupted');
    expect(pendingApprovals(state)).toEqual([
      expect.objectContaining({ approval_id: 'r1.1.1', tool: 'bash', tool_use_id: 'u1', input: { n: 0 } }),
    ]);
    expect(currentDetails(state)).toContain('**Awaiting approval:** bash (r1.1.1)');
  });

  it('runs everything under auto, and per-tool rules win over either mode', () => {
    play([submit('r1'), responded('r1', 1, toolsReply(10, 'bash'))], fresh({ approval: 'auto' }));
    expect(kinds()).not.toContain('approval.requested');
    expect(kinds()).toContain('runTool');
    const asked = play(
      [submit('r1'), responded('r1', 1, toolsReply(10, 'read_file', 'bash', 'delete_file'))],
      fresh({ approval: 'auto', tool_rules: { read_file: 'ask', bash: 'allow', delete_file: 'deny' } }),
    );
    expect(pendingApprovals(asked).map((approval) => approval.tool)).toEqual(['read_file']);
    expect(commands.filter((c) => c.type === 'runTool')).toHaveLength(1);
    const step = asked.active!.step;
    expect(step.kind === 'tools' && step.calls[2]!.result?.content).toContain('denied by this thread');
  });

  it('runs an approved call, and a denial puts the reason in an error result before the model is asked again', () => {
    let state = play([submit('r1'), responded('r1', 1, toolsReply(10, 'bash', 'delete_file'))], fresh());
    expect(pendingApprovals(state)).toHaveLength(2);
    state = play(
      [{ type: 'approvalDecided', now: t0 + 3, decision: { approval_id: 'r1.1.1', decision: 'approve' } }],
      state,
    );
    expect(kinds()).toEqual(['approval.resolved', 'cancelApprovalTimer', 'tool.started', 'runTool']);
    expect(run(state).status_reason).toBe('awaiting_approval');
    state = play(
      [
        toolDone('r1', t0 + 4, 'ok'),
        {
          type: 'approvalDecided',
          now: t0 + 5,
          decision: { approval_id: 'r1.1.2', decision: 'deny', reason: 'keep that file' },
        },
      ],
      state,
    );
    expect(kinds()).toContain('callModel');
    expect(run(state).status_reason).toBeUndefined();
    const results = state.transcript[2]!.content;
    expect(results[1]).toMatchObject({ is_error: true, tool_use_id: 'u2' });
    expect(JSON.stringify(results[1])).toContain('Their reason: keep that file');
  });

  it('ends the run failed with approval_timeout when time runs out, with an error result and no model call', () => {
    let state = play([submit('r1'), responded('r1', 1, toolsReply(10, 'bash', 'bash'))], fresh());
    state = play([{ type: 'approvalExpired', now: t0 + 2 + 60_000, approval_id: 'r1.1.1' }], state);
    expect(kinds()).not.toContain('callModel');
    expect(kinds()).toContain('run.failed');
    expect(run(state)).toMatchObject({ status: 'failed', status_reason: 'approval_timeout' });
    expect(JSON.stringify(state.transcript[2])).toContain('not approved in time');
    expect(threadStatus(state)).toBe('error');
    // A late decision or a second timer changes nothing.
    const after = reduce(state, { type: 'approvalExpired', now: t0 + 70_000, approval_id: 'r1.1.2' });
    expect(after.state).toBe(state);
  });

  it('re-creates timers and does not re-issue calls still awaiting approval after continue-as-new', () => {
    let state = play([submit('r1'), responded('r1', 1, toolsReply(10, 'bash', 'bash'))], fresh());
    state = play(
      [{ type: 'approvalDecided', now: t0 + 3, decision: { approval_id: 'r1.1.1', decision: 'approve' } }],
      state,
    );
    const resumed = resumeCommands(state);
    expect(resumed.map((command) => command.type)).toEqual(['runTool', 'startApprovalTimer']);
    expect(resumed[1]).toEqual({
      type: 'startApprovalTimer',
      approval_id: 'r1.1.2',
      expires_at_ms: t0 + 2 + 60_000,
    });
  });
});

describe('budgets in the reducer', () => {
  it('warns once at 80 %, stops before the model call at 100 %, and continues after the limit is raised', () => {
    let state = play(
      [submit('r1'), responded('r1', 1, toolsReply(85, 'read_file'))],
      fresh({ approval: 'auto', max_tokens: 100 }),
    );
    expect(kinds().filter((kind) => kind === 'budget.warning')).toHaveLength(1);
    state = play([toolDone('r1', t0 + 3, 'x'), responded('r1', 2, textReply(10))], state);
    expect(kinds()).not.toContain('budget.warning');
    expect(run(state)).toMatchObject({ status: 'completed' });
    expect(run(state).summary).toMatchObject({ runs: 1, steps: 2, tokens: 95 });
    state = play([submit('r2', t0 + 10), responded('r2', 1, toolsReply(10, 'read_file'))], state);
    state = play([toolDone('r2', t0 + 11, 'x')], state);
    expect(kinds()).toContain('budget.exceeded');
    expect(kinds()).not.toContain('callModel');
    expect(run(state, 'r2')).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(run(state, 'r2').error?.type).toBe('BudgetExceeded');
    // What the run produced stays: the tool step is in the transcript.
    expect(state.transcript.some((m) => m.content.some((b) => b.type === 'tool_result'))).toBe(true);

    state = play([{ type: 'limitsUpdated', now: t0 + 20, limits: { max_tokens: 1_000 } }], state);
    expect(state.thread.config.max_tokens).toBe(1_000);
    state = play([submit('r3', t0 + 21)], state);
    expect(kinds()).toContain('callModel');
    state = play([{ type: 'limitsUpdated', now: t0 + 22, limits: { max_tokens: null } }], state);
    expect(state.thread.config.max_tokens).toBeUndefined();
  });

  it('counts a cost budget the same way', () => {
    const result = { ...textReply(1), usage: usage(1, 0.5) };
    let state = play([submit('r1'), responded('r1', 1, result)], fresh({ max_cost_usd: 0.5 }));
    state = play([submit('r2', t0 + 5)], state);
    expect(run(state, 'r2')).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
  });

  it("adds a child agent's usage to the run and the thread, and it counts against the parent's budget", () => {
    let state = play(
      [submit('r1'), responded('r1', 1, toolsReply(10, 'read_file'))],
      fresh({ max_tokens: 100 }),
    );
    state = play(
      [
        {
          type: 'childUsageReported',
          now: t0 + 3,
          run_id: 'r1',
          usage: usage(85, 0.01),
        },
      ],
      state,
    );
    expect(kinds()).toEqual(['usage.updated', 'budget.warning']);
    expect(state.usage).toMatchObject({ input_tokens: 95, cost_usd: 0.01 });
    expect(run(state).usage.input_tokens).toBe(95);
    state = play([{ type: 'childUsageReported', now: t0 + 4, run_id: 'r1', usage: usage(10) }], state);
    state = play([toolDone('r1', t0 + 5, 'x')], state);
    expect(run(state)).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
  });

  const modelInput = () => {
    const call = commands.find((command) => command.type === 'callModel');
    return call?.type === 'callModel' ? call.input : undefined;
  };

  it('gives each model call what is left of every limit as its ceiling, and none without limits', () => {
    play([submit('r1')], fresh());
    expect(modelInput()?.budget).toBeUndefined();
    let state = play([submit('r1')], fresh({ approval: 'auto', max_tokens: 1_000, max_cost_usd: 0.5 }));
    expect(modelInput()?.budget).toEqual({ tokens: 1_000, cost_usd: 0.5 });
    state = play([responded('r1', 1, { ...toolsReply(0, 'read_file'), usage: usage(300, 0.123456) })], state);
    play([toolDone('r1', t0 + 3)], state);
    expect(modelInput()?.budget).toEqual({ tokens: 700, cost_usd: 0.376544 });
  });

  it('ends the run budget_exceeded when the call is refused, charging what its attempts were billed', () => {
    let state = play([submit('r1')], fresh({ max_tokens: 1_000 }));
    state = play(
      [
        modelFailed(
          { type: 'BudgetExceeded', message: 'the next model call needs at least 1100 tokens' },
          usage(400, 0.002),
        ),
      ],
      state,
    );
    expect(kinds()).toEqual(expect.arrayContaining(['usage.updated', 'budget.exceeded', 'run.failed']));
    expect(run(state)).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(run(state).error).toEqual({
      type: 'BudgetExceeded',
      message: 'the next model call needs at least 1100 tokens',
    });
    expect(state.usage).toMatchObject({ input_tokens: 400, cost_usd: 0.002 });
    expect(run(state).usage.input_tokens).toBe(400);
  });

  it('charges a failed call what its attempts were billed, whatever the failure', () => {
    let state = play([submit('r1')], fresh());
    state = play([modelFailed({ type: 'ModelOverloaded', message: 'overloaded' }, usage(250, 0.001))], state);
    expect(run(state)).toMatchObject({ status: 'failed', status_reason: 'model_error' });
    expect(state.usage).toMatchObject({ input_tokens: 250, cost_usd: 0.001 });
  });

  it("carves children's limits out of what is left, holds them until each reports, and gives the least when nothing is left", () => {
    const spawnFlags = { sideEffects: true, sensitive: false };
    const spawnReply = (...ids: string[]): CallModelResult => ({
      content: ids.map((id) => ({
        type: 'tool_use',
        id,
        name: 'spawn_agent',
        input: { task: `task ${id}` },
      })),
      stop_reason: 'tool_use',
      usage: usage(100, 0.01),
      model: 'scripted-demo',
      tools: { spawn_agent: spawnFlags },
    });
    let state = play(
      [submit('r1'), responded('r1', 1, spawnReply('c1', 'c2', 'c3', 'c4', 'c5'))],
      fresh({ approval: 'auto', max_tokens: 1_300, max_cost_usd: 0.13 }),
    );
    const started = commands.flatMap((command) => (command.type === 'startChild' ? [command] : []));
    expect(started).toHaveLength(5);
    // 1,200 tokens and $0.12 left, in six shares: one for each child, one kept for the parent.
    for (const child of started) {
      expect(child.allowance).toEqual({ tokens: 200, cost_usd: 0.02 });
      expect(child.child.config).toMatchObject({ max_tokens: 200, max_cost_usd: 0.02 });
    }
    const report = (id: string, spent: number) => ({
      type: 'childCompleted' as const,
      now: t0 + 5,
      report: {
        parent_thread_id: 't1',
        parent_run_id: 'r1',
        tool_use_id: id,
        task: `task ${id}`,
        child_thread_id: `t1.${id}`,
        run: {
          run_id: 'task',
          status: 'completed',
          output: 'ok',
          usage: usage(spent, spent / 10_000),
        } as never,
      },
    });
    const started_ = (id: string) => ({
      type: 'childStarted' as const,
      now: t0 + 4,
      child_thread_id: `t1.${id}`,
    });
    state = play(['c1', 'c2', 'c3', 'c4', 'c5'].map(started_), state);
    state = play([report('c1', 150), report('c2', 200), report('c3', 50), report('c4', 200)], state);
    // c5 still holds its 200: the parent's next call could only be asked once it reports.
    expect(state.children?.map((child) => child.allowance)).toEqual([{ tokens: 200, cost_usd: 0.02 }]);
    play([report('c5', 10)], state);
    expect(kinds()).toContain('callModel');
    expect(modelInput()?.budget).toEqual({ tokens: 1_300 - 100 - 610, cost_usd: 0.059 });

    // With almost nothing left a child still starts (as it did before the ceiling), with the
    // least limit there is: it refuses its own first call and spends nothing.
    play(
      [submit('r1'), responded('r1', 1, { ...spawnReply('c1'), usage: usage(1_300, 0.01) })],
      fresh({ approval: 'auto', max_tokens: 1_300 }),
    );
    const poor = commands.flatMap((command) => (command.type === 'startChild' ? [command] : []));
    expect(poor.map((command) => command.child.config.max_tokens)).toEqual([1]);
  });
});
