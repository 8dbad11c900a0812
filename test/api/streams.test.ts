/** SSE over the durable event log: order, offsets, cursors, replays, and disconnects that cancel nothing. */
import { getStreamBaseQuery } from '../../common/messages';
import type { Run } from '../../common/run';
import { apiHarness, call, createThread, userInput, waitRun } from '../helpers/api';
import { deltaText, durable, idsIncrease, readSse } from '../helpers/sse';
import { eventually } from '../helpers/temporal';
import { workflowIdFor } from '../../common/thread';

jest.setTimeout(120_000);

describe('SSE streams', () => {
  const harness = apiHarness();
  let base: string;
  beforeAll(() => {
    base = harness.base;
  });

  const newThread = () => createThread(base, 's');
  /** Keel's native event names (the `keel` CLI's); LangGraph's modes are the default. */
  const keel = 'stream_mode=keel';
  const post = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  it('streams a new run: metadata first, every durable event with its offset, token deltas, end last', async () => {
    const threadId = await newThread();
    const stream = await readSse(
      `${base}/threads/${threadId}/runs/stream`,
      post(userInput('hello stream', { stream_mode: 'keel' })),
    );
    expect(stream.status).toBe(200);
    const names = stream.events.map((event) => event.event);
    expect(names[0]).toBe('metadata');
    expect(names.at(-1)).toBe('end');
    const runId = stream.events[0]!.data.run_id as string;
    expect(stream.events[0]!.data).toEqual({ run_id: runId, thread_id: threadId });
    // LangGraph's SDK reads the run id from Content-Location; Location re-attaches in the same mode.
    expect(stream.headers.get('content-location')).toBe(`/threads/${threadId}/runs/${runId}`);
    expect(stream.headers.get('location')).toBe(
      `/threads/${threadId}/runs/${runId}/stream?stream_mode=${encodeURIComponent('["keel"]')}`,
    );
    const events = durable(stream.events);
    expect(events.map((event) => event.event)).toEqual(
      expect.arrayContaining([
        'run.created',
        'run.started',
        'message.delta',
        'message.completed',
        'run.completed',
      ]),
    );
    expect(events[0]!.event).toBe('run.created');
    expect(events.at(-1)!.event).toBe('run.completed');
    expect(idsIncrease(events)).toBe(true);
    const completed = events.find((event) => event.event === 'message.completed')!;
    const message = completed.data.message as { content: { text: string }[] };
    expect(deltaText(events)).toBe(message.content.map((block) => block.text).join(''));
    const run = (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`)).body;
    expect(run.first_event_offset).toBe(events[0]!.id);
  });

  it('replays a finished run from its first event and ends, and resumes after a cursor', async () => {
    const threadId = await newThread();
    await call(base, 'POST', `/threads/${threadId}/runs/wait`, userInput('first run'));
    const second = await call<Record<string, unknown>>(
      base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      userInput('second run'),
    );
    const runId = (second.headers.get('content-location') ?? '').split('/').at(-1)!;
    const replay = await readSse(`${base}/threads/${threadId}/runs/${runId}/stream?${keel}`);
    const events = durable(replay.events);
    expect(events[0]!.event).toBe('run.created');
    expect(events.every((event) => (event.data.run_id ?? (event.data.run as Run).run_id) === runId)).toBe(
      true,
    );
    expect(replay.events.at(-1)!.event).toBe('end');
    const middle = events[2]!.id!;
    const resumed = await readSse(
      `${base}/threads/${threadId}/runs/${runId}/stream?${keel}&starting_after=${middle}`,
    );
    expect(durable(resumed.events)).toEqual(events.filter((event) => event.id! > middle));
    const byHeader = await readSse(`${base}/threads/${threadId}/runs/${runId}/stream?${keel}`, {
      headers: { 'last-event-id': String(events.at(-1)!.id) },
    });
    expect(byHeader.events.map((event) => event.event)).toEqual(['metadata', 'end']);
  });

  it('answers 410 stream_cursor_expired for a cursor older than the log, 422 for a bad cursor', async () => {
    const threadId = await newThread();
    // Runs whose events outgrow what continue-as-new carries (512 KiB), so the log's front is dropped.
    const commands = Array.from(
      { length: 20 },
      (_, index) => `run: head -c 5000 /dev/zero | tr '\\0' x${index}`,
    );
    for (let index = 0; index < 5; index++)
      await call(base, 'POST', `/threads/${threadId}/runs/wait`, userInput(commands.join('\n')));
    const handle = harness.client.workflow.getHandle(workflowIdFor(threadId));
    const baseOffset = await eventually(
      async () => {
        const offset = await handle.query(getStreamBaseQuery);
        return offset > 1 ? offset : undefined;
      },
      60_000,
      'the log to be truncated',
    );
    const expired = await readSse(`${base}/threads/${threadId}/stream`, {
      headers: { 'last-event-id': '0' },
    });
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ error: { code: 'stream_cursor_expired', type: 'gone_error' } });
    const runs = (await call<Run[]>(base, 'GET', `/threads/${threadId}/runs`)).body;
    const oldest = runs.at(-1)!;
    const expiredRun = await readSse(
      `${base}/threads/${threadId}/runs/${oldest.run_id}/stream?${keel}&starting_after=0`,
    );
    expect(expiredRun.status).toBe(410);
    // Without a cursor, a run whose events were dropped still says how it ended.
    const summary = await readSse(`${base}/threads/${threadId}/runs/${oldest.run_id}/stream?${keel}`);
    expect(summary.events.map((event) => event.event)).toEqual(['metadata', 'run.completed', 'end']);
    const live = await readSse(
      `${base}/threads/${threadId}/stream?starting_after=${baseOffset}`,
      {},
      () => true,
    );
    expect(live.status).toBe(200);
    const bad = await readSse(`${base}/threads/${threadId}/stream?starting_after=abc`);
    expect(bad.status).toBe(422);
  });

  it('sends heartbeats without an id while the model thinks, and a dropped client cancels nothing', async () => {
    const threadId = await newThread();
    const created = await call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput('think: 9'));
    const runId = created.body.run_id;
    const partial = await readSse(
      `${base}/threads/${threadId}/runs/${runId}/stream?${keel}`,
      {},
      (event) => event.event === 'heartbeat',
    );
    const heartbeat = partial.events.find((event) => event.event === 'heartbeat')!;
    expect(heartbeat.id).toBeUndefined();
    const finished = await eventually(async () => {
      const run = (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`)).body;
      return run.status === 'completed' ? run : undefined;
    }, 60_000);
    expect(finished.status).toBe('completed');
  });

  it('lists active runs across threads from Temporal visibility, filtered by status', async () => {
    const first = await newThread();
    const second = await newThread();
    const running = (await call<Run>(base, 'POST', `/threads/${first}/runs`, userInput('think: 6'))).body;
    const queued = (await call<Run>(base, 'POST', `/threads/${first}/runs`, userInput('next'))).body;
    const deferred = await waitRun<Run>(base, second, userInput('think: 6'), 'timeout_s=1');
    expect(deferred.status).toBe(202);
    const ids = (runs: Run[]) => runs.map((run) => run.run_id).sort();
    const active = await eventually(
      async () => {
        const listed = (await call<Run[]>(base, 'GET', '/runs')).body;
        return listed.length >= 3 ? listed : undefined;
      },
      30_000,
      'three active runs',
    );
    expect(ids(active)).toEqual(ids([running, queued, deferred.body]));
    const onlyQueued = (await call<Run[]>(base, 'GET', '/runs?status=queued')).body;
    expect(ids(onlyQueued)).toEqual([queued.run_id]);
    const bad = await call(base, 'GET', '/runs?status=completed');
    expect(bad.status).toBe(422);
    await call(base, 'POST', `/threads/${first}/runs/${running.run_id}/cancel`, {});
    await call(base, 'POST', `/threads/${first}/runs/${queued.run_id}/cancel`, {});
    await call(base, 'POST', `/threads/${second}/runs/${deferred.body.run_id}/cancel`, {});
    const none = await eventually(
      async () => {
        const listed = (await call<Run[]>(base, 'GET', '/runs')).body;
        return listed.length === 0 ? listed : undefined;
      },
      30_000,
      'no active runs',
    );
    expect(none).toEqual([]);
  });

  it('follows the whole thread from a cursor across runs', async () => {
    const threadId = await newThread();
    await call(base, 'POST', `/threads/${threadId}/runs/wait`, userInput('one'));
    const all = await readSse(
      `${base}/threads/${threadId}/stream?starting_after=0`,
      {},
      (event) => event.event === 'run.completed',
    );
    expect(durable(all.events)[0]!.id).toBe(1);
    expect(all.events[0]!.event).toBe('metadata');
  });
});
