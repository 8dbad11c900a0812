/**
 * Runs whose caller waits (`runs/wait`): one `submitInput` update that answers at the run's end,
 * model calls made as local activities inside the workflow task (decision 0200), and what that
 * must not cost: reads, cancels and timeouts during such a call, and streamed runs keep theirs.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../../common/thread';
import { apiHarness, call, userInput, waitRun } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import { deltaText, readSse } from '../helpers/sse';

jest.setTimeout(120_000);

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

describe('a run whose caller waits', () => {
  const harness = apiHarness(() => ({ KEEL_LOCAL_MODEL_CALLS: '1' }));

  const history = async (threadId: string): Promise<HistoryEvent[]> =>
    (await harness.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory()).events ?? [];
  const updatesNamed = (events: HistoryEvent[], name: string) =>
    events.filter(
      (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name,
    );
  const scheduled = (events: HistoryEvent[]) =>
    events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  const localCalls = (events: HistoryEvent[]) =>
    events.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity');

  it('is one update, with its model calls as local activities and its tools as ordinary ones', async () => {
    const threadId = randomUUID();
    const first = await waitRun(harness.base, threadId, userInput('hello', { if_not_exists: 'create' }));
    expect(first.status).toBe(200);
    const before = (await history(threadId)).length;
    const tool = await waitRun(harness.base, threadId, userInput('run: echo waited'));
    expect(tool.status).toBe(200);
    expect(JSON.stringify(tool.body)).toContain('waited');
    const turn = (await history(threadId)).slice(before);
    expect(updatesNamed(turn, 'submitInput')).toHaveLength(1);
    expect(updatesNamed(turn, 'awaitRun')).toEqual([]);
    expect(turn.filter((event) => event.eventType === EventType.EVENT_TYPE_TIMER_STARTED)).toEqual([]);
    expect(scheduled(turn)).toEqual(['runTool']);
    expect(localCalls(turn)).toHaveLength(2);
  });

  it('answers a read of the thread while its model call runs, instead of refusing it', async () => {
    const threadId = randomUUID();
    const waiting = waitRun(harness.base, threadId, userInput('think: 6', { if_not_exists: 'create' }));
    // The model thinks inside the workflow task that took the input; reads wait for that task.
    await eventually(
      async () => ((await history(threadId)).length > 0 ? true : undefined),
      30_000,
      'the thread to start',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const state = await call(harness.base, 'GET', `/threads/${threadId}/state`);
    expect(state.status).toBe(200);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(localCalls(await history(threadId))).toHaveLength(1);
  });

  it('with a short timeout, runs as a background run does: ordinary activities, deferred at once', async () => {
    const threadId = randomUUID();
    const response = await waitRun(
      harness.base,
      threadId,
      userInput('think: 4\nrun: echo later', { if_not_exists: 'create' }),
      'timeout_s=1',
    );
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'deferred', thread_id: threadId });
    const runId = String(response.body.run_id);
    const done = await eventually(async () => {
      const run = await call(harness.base, 'GET', `/threads/${threadId}/runs/${runId}`);
      return run.body.status === 'completed' ? run : undefined;
    }, 60_000);
    expect(done.body).toMatchObject({ status: 'completed' });
    const events = await history(threadId);
    expect(localCalls(events)).toEqual([]);
    expect(scheduled(events).filter((name) => name === 'callModel')).toHaveLength(2);
    expect(updatesNamed(events, 'deferRun')).toHaveLength(1);
  });

  it('can be cancelled while its model call runs', async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    const waiting = waitRun(
      harness.base,
      threadId,
      userInput('think: 60', { if_not_exists: 'create', run_id: runId }),
    );
    await eventually(
      async () => ((await history(threadId)).length > 0 ? true : undefined),
      30_000,
      'the thread to start',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cancelled = await call(harness.base, 'POST', `/threads/${threadId}/runs/${runId}/cancel`);
    expect([200, 202]).toContain(cancelled.status);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ __error__: { error: 'Cancelled' } });
    const run = await call(harness.base, 'GET', `/threads/${threadId}/runs/${runId}`);
    expect(run.body).toMatchObject({ status: 'cancelled' });
  });

  it('leaves a streamed run its token deltas and ordinary model activities', async () => {
    const threadId = randomUUID();
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    const stream = await readSse(`${harness.base}/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(userInput('hello streams', { stream_mode: 'keel' })),
    });
    expect(stream.status).toBe(200);
    expect(deltaText(stream.events)).toContain('hello streams');
    const turn = await history(threadId);
    expect(scheduled(turn)).toContain('callModel');
    expect(localCalls(turn)).toEqual([]);
  });
});
