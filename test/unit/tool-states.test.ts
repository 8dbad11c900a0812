/**
 * Tool calls as a union of states: how a failed tool is answered (the reducer decides, from the
 * call's flags), and how a state carried by an earlier release, whose calls had no `status`,
 * resumes exactly as it did.
 */
import type { CallModelResult } from '../../common/activities';
import { reduce } from '../../workflows/core/reducer';
import { type ThreadState, fromCarried } from '../../workflows/core/state';
import { afterFirstAnswer, t0, usage } from '../helpers/reducer';
import type { ConversationEvent } from '../../workflows/core/transitions';
import { resumeCommands } from '../../workflows/core/views';
import type { ToolTimeout, WorkerFate } from '../../workflows/core/wording';

const use = (id: string, name: string) => ({ type: 'tool_use' as const, id, name, input: { path: id } });

function askedForTools(tools: CallModelResult['tools'], approval: 'auto' | 'require' = 'auto'): ThreadState {
  const content = Object.keys(tools).map((name, index) => use(`u${index + 1}`, name));
  return afterFirstAnswer({ content, stop_reason: 'tool_use', usage, model: 'm', tools }, approval).state;
}

const failed = (
  tool_use_id: string,
  timeout: ToolTimeout | undefined,
  worker?: WorkerFate,
): ConversationEvent => ({
  type: 'toolFailed',
  now: t0 + 3,
  run_id: 'r1',
  tool_use_id,
  failure: { message: 'exit 1', timeout, ...(worker === undefined ? {} : { worker }) },
});

function resultText(state: ThreadState): string {
  const last = state.transcript.at(-1);
  const block = last?.role === 'user' ? last.content[0] : undefined;
  return block?.type === 'tool_result' ? block.content : '';
}

describe('a tool that failed', () => {
  it('is answered "interrupted, may have partly run" when a side-effecting call was given up on by timeout', () => {
    const state = askedForTools({ bash: { sideEffects: true, sensitive: false } });
    const { state: next, commands } = reduce(state, failed('u1', 'HEARTBEAT'));
    expect(resultText(next)).toMatch(
      /^Tool "bash" was interrupted \(.*\) and may have partly run; it was not run again\.$/,
    );
    expect(commands.map((c) => c.type)).toEqual(['emit', 'emit', 'emit', 'callModel']);
  });

  it.each([
    // A history or frontend restart misses heartbeats as a dead worker does: it does not claim which.
    [
      'HEARTBEAT',
      'Temporal heard no heartbeat from it for 10 s: its worker stopped, or lost its connection to a Temporal service that stopped',
    ],
    ['START_TO_CLOSE', 'it ran past its 15-minute limit'],
    ['SCHEDULE_TO_START', 'no worker took it in time'],
    ['SCHEDULE_TO_CLOSE', 'it ran past its overall time limit'],
  ] as const)('says which fault interrupted it: %s', (timeout, fault) => {
    const state = askedForTools({ bash: { sideEffects: true, sensitive: false } });
    expect(resultText(reduce(state, failed('u1', timeout)).state)).toBe(
      `Tool "bash" was interrupted (${fault}) and may have partly run; it was not run again.`,
    );
  });

  it.each([
    ['stopped', 'its worker stopped: Temporal heard no heartbeat from it for 10 s, and it no longer answers'],
    [
      'running',
      'a Temporal service stopped or could not be reached: its worker still runs, but Temporal heard no heartbeat from it for 10 s',
    ],
  ] as const)(
    'tells a worker that %s apart when the workflow could ask it (decision 0412)',
    (worker, fault) => {
      const state = askedForTools({ bash: { sideEffects: true, sensitive: false } });
      expect(resultText(reduce(state, failed('u1', 'HEARTBEAT', worker)).state)).toBe(
        `Tool "bash" was interrupted (${fault}) and may have partly run; it was not run again.`,
      );
    },
  );

  it('is answered with its failure when it has no side effects, or failed by itself', () => {
    const readOnly = askedForTools({ read_file: { sideEffects: false, sensitive: false } });
    expect(resultText(reduce(readOnly, failed('u1', 'HEARTBEAT')).state)).toBe(
      'Tool "read_file" failed: exit 1',
    );
    const sideEffecting = askedForTools({ bash: { sideEffects: true, sensitive: false } });
    expect(resultText(reduce(sideEffecting, failed('u1', undefined)).state)).toBe(
      'Tool "bash" failed: exit 1',
    );
  });

  it('changes nothing when its call is not running (a late or repeated report)', () => {
    const state = askedForTools({ bash: { sideEffects: true, sensitive: false } });
    const once = reduce(state, failed('u1', undefined)).state;
    expect(reduce(once, { ...failed('u1', 'HEARTBEAT'), now: t0 + 4 })).toEqual({
      state: once,
      commands: [],
    });
  });
});

describe('a state carried by an earlier release', () => {
  it('gives its calls the status their fields imply, and resumes the same commands', () => {
    const state = askedForTools(
      {
        read_file: { sideEffects: false, sensitive: false },
        bash: { sideEffects: true, sensitive: true },
        write_file: { sideEffects: true, sensitive: true },
      },
      'require',
    );
    const approved = reduce(state, {
      type: 'approvalDecided',
      now: t0 + 3,
      decision: { approval_id: 'r1.1.3', decision: 'approve' },
    }).state;
    const active = approved.active;
    if (active?.step.kind !== 'tools') throw new Error('expected a tools step');
    // As an earlier release carried them: no status, the rest as it was.
    const legacy = {
      ...approved,
      active: {
        ...active,
        step: { ...active.step, calls: active.step.calls.map(({ status: _status, ...call }) => call) },
      },
    } as unknown as ThreadState;
    const upgraded = fromCarried(legacy);
    const step = upgraded.active?.step;
    expect(step?.kind === 'tools' && step.calls.map((call) => call.status)).toEqual([
      'running',
      'awaiting_approval',
      'running',
    ]);
    expect(upgraded).toEqual(approved);
    expect(resumeCommands(upgraded)).toEqual(resumeCommands(approved));
    expect(resumeCommands(upgraded).map((c) => (c.type === 'runTool' ? c.use.name : c.type))).toEqual([
      'read_file',
      'write_file',
      'startApprovalTimer',
    ]);
  });
});
