/**
 * What the workflow's handlers answer, decided in the core: which updates naming a run are
 * refused, when a waiting caller is answered, and the reads a model activity and older API
 * releases make.
 */
import { findRun } from '../../workflows/core/state';
import { stepMessages, transcriptAfter } from '../../workflows/core/pages';
import { validateDeleteRun, validateRunRef } from '../../workflows/core/validate';
import { isSettled } from '../../workflows/core/views';
import { afterFirstAnswer, usage } from '../helpers/reducer';

/** Run r1 after its first model call: answered (`end_turn`), or calling the model again (`pause_turn`). */
const after = (stop_reason: 'end_turn' | 'pause_turn') =>
  afterFirstAnswer({ content: [{ type: 'text', text: 'hi' }], stop_reason, usage, model: 'm', tools: {} })
    .state;
const answered = () => after('end_turn');
const thinkingAgain = () => after('pause_turn');
const askingForBash = () =>
  afterFirstAnswer(
    {
      content: [{ type: 'tool_use', id: 'u1', name: 'bash', input: { command: 'ls' } }],
      stop_reason: 'tool_use',
      usage,
      model: 'm',
      tools: { bash: { sideEffects: true, sensitive: true } },
    },
    'require',
  ).state;

describe('updates that name a run', () => {
  it('refuses a run the thread does not have', () => {
    expect(validateRunRef(answered(), 'r9')).toEqual({
      type: 'RunNotFound',
      message: 'no run r9 on this thread',
    });
    expect(validateRunRef(answered(), 'r1')).toBeUndefined();
  });

  it('deletes only a finished run: an active one is cancelled first', () => {
    expect(validateDeleteRun(answered(), 'r1')).toBeUndefined();
    expect(validateDeleteRun(askingForBash(), 'r1')).toMatchObject({ type: 'RunActive' });
    expect(validateDeleteRun(answered(), 'r9')).toMatchObject({ type: 'RunNotFound' });
  });
});

describe('a waiting caller', () => {
  it('is answered when the run is over or waits on a human, not while it works', () => {
    expect(isSettled(findRun(answered(), 'r1')!)).toBe(true);
    expect(isSettled(findRun(askingForBash(), 'r1')!)).toBe(true);
    expect(isSettled(findRun(thinkingAgain(), 'r1')!)).toBe(false);
  });
});

describe('reads', () => {
  it('gives a model activity its step’s messages, or says the step is no longer current', () => {
    const state = askingForBash();
    expect(stepMessages(state, { run_id: 'r1', step: 1 })).toMatchObject({
      current: false,
      type: 'ModelStepNotCurrent',
    });
    expect(stepMessages(thinkingAgain(), { run_id: 'r1', step: 2 })).toMatchObject({ current: true });
  });

  it('lists the transcript after a message id, at most `limit` messages', () => {
    const state = answered();
    const [first, second] = state.transcript;
    expect(transcriptAfter(state, {})).toEqual(state.transcript);
    expect(transcriptAfter(state, { after: 0, limit: 1 })).toEqual([first]);
    expect(transcriptAfter(state, { after: Number(first!.id.slice(1)) })).toEqual([second]);
  });
});
