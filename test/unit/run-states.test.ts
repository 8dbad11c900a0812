/**
 * A run as a union of states: not started, started, ended. The impossible combinations are type
 * errors (checked by `tsc` in `npm run check`); the reducer moves a run through the states.
 */
import { queuedRun, type Run } from '../../common/run';
import { reduce } from '../../workflows/core/reducer';
import { findRun } from '../../workflows/core/state';
import { afterFirstAnswer, usage } from '../helpers/reducer';

const queued = queuedRun(
  { thread_id: 't1', model: 'scripted:demo' },
  {
    run_id: 'r9',
    content: [{ type: 'text', text: 'hello' }],
    assistant_id: 'agent',
    multitask_strategy: 'enqueue',
    metadata: {},
  },
  0,
);

describe('a run as a union of states', () => {
  it('rejects, by type, a run that is started without a start, or ended without an end', () => {
    // @ts-expect-error a running run has started_at
    const runningWithoutStart: Run = { ...queued, status: 'running' };
    // @ts-expect-error only an ended run has ended_at
    const queuedButEnded: Run = { ...queued, ended_at: '2026-01-01T00:00:00.000Z' };
    // @ts-expect-error an ended run has ended_at
    const endedWithoutEnd: Run = { ...queued, status: 'completed' };
    // @ts-expect-error only an ended run has an output
    const startedWithOutput: Run = { ...queued, status: 'running', started_at: 'x', output: 'done' };
    const started: Run = { ...queued, status: 'running', started_at: '2026-01-01T00:00:00.000Z' };
    const ended: Run = {
      ...started,
      status: 'completed',
      ended_at: '2026-01-01T00:00:01.000Z',
      output: 'hi',
    };
    expect([
      runningWithoutStart,
      queuedButEnded,
      endedWithoutEnd,
      startedWithOutput,
      started,
      ended,
    ]).toHaveLength(6);
  });

  it('has started_at while running and ended_at once ended, through the reducer', () => {
    const { state } = afterFirstAnswer({
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      usage,
      model: 'm',
      tools: {},
    });
    const run = findRun(state, 'r1');
    expect(run).toMatchObject({
      status: 'completed',
      started_at: expect.any(String),
      ended_at: expect.any(String),
    });
    const closed = reduce(state, { type: 'closeRequested', now: Date.parse(run?.ended_at ?? '') + 1 });
    expect(findRun(closed.state, 'r1')).toEqual(run);
  });
});
