/** Forks in the pure core: where the transcript may be cut, what is kept, and how much. */
import { limits } from '../../common/limits';
import type { SubmitInput } from '../../common/messages';
import type { Message } from '../../common/transcript';
import { branchPaths } from '../../common/branch-tree';
import { forkAt, hasCheckpoint } from '../../workflows/core/branches';
import { reduce } from '../../workflows/core/reducer';
import { initialState, type ThreadState } from '../../workflows/core/state';
import { compact } from '../../workflows/core/transcript';
import { validateSubmit } from '../../workflows/core/validate';
import { t0 } from '../helpers/reducer';

const at = new Date(t0).toISOString();
const user = (id: number, text: string): Message => ({
  role: 'user',
  id: `m${id}`,
  run_id: 'r',
  created_at: at,
  content: [{ type: 'text', text }],
});
const answer = (id: number, text: string): Message => ({
  role: 'assistant',
  id: `m${id}`,
  run_id: 'r',
  created_at: at,
  model: 'scripted:demo',
  stop_reason: 'end_turn',
  content: [{ type: 'text', text }],
});
const toolCall = (id: number): Message => ({
  role: 'assistant',
  id: `m${id}`,
  run_id: 'r',
  created_at: at,
  model: 'scripted:demo',
  stop_reason: 'tool_use',
  content: [{ type: 'tool_use', id: `call${id}`, name: 'read_file', input: { path: 'a' } }],
});
const toolResult = (id: number, callId: number): Message => ({
  role: 'user',
  id: `m${id}`,
  run_id: 'r',
  created_at: at,
  content: [{ type: 'tool_result', tool_use_id: `call${callId}`, content: 'text of a' }],
});

const thread = {
  thread_id: 't1',
  metadata: {},
  config: { model: 'scripted:demo', approval: 'auto' as const, approval_timeout_s: 60, max_steps: 5 },
  created_at: at,
};

/** first → answer, second (a tool step, then an answer), third → answer. */
function threeTurns(): ThreadState {
  const transcript = [
    user(1, 'first'),
    answer(2, 'one'),
    user(3, 'second'),
    toolCall(4),
    toolResult(5, 4),
    answer(6, 'two'),
    user(7, 'third'),
    answer(8, 'three'),
  ];
  return { ...initialState(thread), transcript, next_sequence: 9 };
}

const ids = (messages: readonly Message[]) => messages.map((message) => message.id);

const input = (extra: Partial<SubmitInput> = {}): SubmitInput => ({
  run_id: 'r2',
  assistant_id: 'agent',
  content: [{ type: 'text', text: 'second, edited' }],
  multitask_strategy: 'enqueue',
  metadata: {},
  ...extra,
});

describe('forks', () => {
  it.each([
    ['start', true],
    ['m2', true],
    ['m3', true],
    ['m5', true],
    ['m8', true],
    // The tool call alone is no checkpoint: cutting there would orphan its tool_use.
    ['m4', false],
    ['m9', false],
    ['x', false],
  ])('knows whether %s is a checkpoint: %s', (checkpointId, expected) => {
    expect(hasCheckpoint(threeTurns(), checkpointId)).toBe(expected);
  });

  it('cuts the transcript back to the checkpoint and keeps the rest as a branch off it', () => {
    const forked = forkAt(threeTurns(), 'm2')!;
    expect(ids(forked.transcript)).toEqual(['m1', 'm2']);
    expect(forked.branches).toEqual([{ parent: 'm2', messages: threeTurns().transcript.slice(2) }]);
  });

  it('goes back to a checkpoint on an earlier branch, and keeps the branch it leaves', () => {
    const edited = { ...forkAt(threeTurns(), 'm2')!, next_sequence: 11 };
    const grown = {
      ...edited,
      transcript: [...edited.transcript, user(9, 'edited'), answer(10, 'two again')],
    };
    const back = forkAt(grown, 'm6')!;
    expect(ids(back.transcript)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect(back.branches?.map((branch) => [branch.parent, ids(branch.messages)])).toEqual([
      ['m6', ['m7', 'm8']],
      ['m2', ['m9', 'm10']],
    ]);
    expect(branchPaths(back.transcript, back.branches!, 0).map(({ path }) => ids(path).join(' '))).toEqual([
      'm1 m2 m3 m4 m5 m6 m7 m8',
      'm1 m2 m9 m10',
    ]);
  });

  it('forks from the start: the whole transcript becomes a branch', () => {
    const forked = forkAt(threeTurns(), 'start')!;
    expect(forked.transcript).toEqual([]);
    expect(forked.branches).toEqual([{ parent: 'start', messages: threeTurns().transcript }]);
  });

  it('refuses a run from an unknown checkpoint or from inside a step, before anything is taken', () => {
    expect(validateSubmit(threeTurns(), input({ checkpoint_id: 'm4' }))).toMatchObject({
      type: 'CheckpointNotFound',
    });
    expect(validateSubmit(threeTurns(), input({ checkpoint_id: 'm3' }))).toBeUndefined();
  });

  it('starts a forked run from its checkpoint: its input follows the fork point', () => {
    const { state, commands } = reduce(threeTurns(), {
      type: 'inputSubmitted',
      now: t0 + 5,
      input: input({ checkpoint_id: 'm2' }),
    });
    expect(ids(state.transcript)).toEqual(['m1', 'm2', 'm9']);
    expect(state.transcript.at(-1)).toMatchObject({ role: 'user', run_id: 'r2' });
    expect(state.branches).toHaveLength(1);
    expect(state.runs.at(-1)).toMatchObject({ run_id: 'r2', status: 'running', checkpoint_id: 'm2' });
    expect(commands.map((command) => command.type)).toEqual(['emit', 'emit', 'emit', 'callModel']);
  });

  it('keeps the newest branches within limits.branchChars', () => {
    const big = (id: number) => user(id, 'x'.repeat(Math.floor(limits.branchChars / 3)));
    let state: ThreadState = { ...initialState(thread), transcript: [user(1, 'first'), answer(2, 'one')] };
    for (let fork = 0; fork < 5; fork++) {
      const id = 3 + fork * 2;
      state = { ...state, transcript: [...state.transcript, big(id), answer(id + 1, 'ok')] };
      state = forkAt(state, 'm2')!;
    }
    const kept = state.branches!.map((branch) => ids(branch.messages)[0]);
    expect(kept).toEqual(['m9', 'm11']);
    expect(JSON.stringify(state.branches).length).toBeLessThan(limits.branchChars);
  });

  it('drops branches that hang off messages compaction took away', () => {
    const forked = forkAt(threeTurns(), 'm2')!;
    const huge = user(9, 'y'.repeat(limits.transcriptChars));
    const grown = { ...forked, transcript: [...forked.transcript, huge, answer(10, 'ok'), user(11, 'z')] };
    const compacted = compact(grown);
    expect(compacted.compacted_messages).toBeGreaterThan(0);
    expect(compacted.branches).toEqual([]);
  });
});
