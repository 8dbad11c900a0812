/**
 * The live channel across processes (decision 0340): real `keel worker` processes serving their
 * model calls' text, two API processes in miniature reading it, and a worker killed mid-answer.
 */
import { randomUUID } from 'node:crypto';
import type { RunningApi } from '../../api/server';
import type { AssistantMessage } from '../../common/transcript';
import { workflowIdFor } from '../../common/thread';
import { call, startTestApi, userInput } from '../helpers/api';
import { deltaText, durable, readSse, type SseEvent } from '../helpers/sse';
import { eventually } from '../helpers/temporal';
import type { WorkerProcess } from '../helpers/worker-process';
import { anthropicModel, chaosHarness, type ChaosHarness } from './chaos-helpers';

jest.setTimeout(180_000);

type Harness = ChaosHarness & { apis: RunningApi[] };

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');
const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const answerText = (events: SseEvent[]): string => {
  const message = events.find((event) => event.event === 'message.completed')!.data
    .message as AssistantMessage;
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
};
const livePieces = (events: SseEvent[]) =>
  events.filter((event) => event.event === 'message.delta' && event.eventId?.includes(':') === true);

describe('live text across worker and API processes', () => {
  const harness = chaosHarness() as Harness;
  beforeAll(async () => {
    harness.apis = [
      await startTestApi(harness.client, harness.config),
      await startTestApi(harness.client, harness.config),
    ];
    // A model at a realistic pace: each answer takes seconds.
    harness.fake.setResponder(() => ({
      kind: 'message',
      content: [{ type: 'text', text: 'a long answer that streams slowly '.repeat(8) }],
      tokenDelayMs: 120,
    }));
  });
  afterAll(async () => {
    for (const api of harness.apis ?? []) await api.stop();
  });

  const ready = (worker: WorkerProcess) => worker.waitForLog((line) => line.msg === 'worker ready');
  const liveUrl = (worker: WorkerProcess) =>
    worker.logs.find((line) => line.msg === 'live text served')?.url as string | undefined;

  /** The live URL of the worker running the thread's model call now. */
  const runningOn = (threadId: string) =>
    eventually(async () => {
      const described = await harness.client.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: workflowIdFor(threadId) },
      });
      const pending = described.pendingActivities?.find(
        (activity) => activity.activityType?.name === 'callModel',
      );
      const identity = pending?.lastWorkerIdentity ?? '';
      return identity.includes(' live=') ? identity.split(' live=')[1] : undefined;
    }, 30_000);

  /** A typewriter run on a new thread, streamed through every API at once. */
  const streamThroughEveryApi = async (): Promise<{
    threadId: string;
    url: string;
    streams: SseEvent[][];
  }> => {
    const threadId = `c-${randomUUID()}`;
    const [first, second] = harness.apis;
    await call(first!.url, 'POST', '/threads', { thread_id: threadId });
    const created = await call<{ run_id: string }>(
      first!.url,
      'POST',
      `/threads/${threadId}/runs`,
      userInput(words(5), { config: anthropicModel }),
    );
    const streams = Promise.all(
      [first!, second!].map((api) =>
        readSse(`${api.url}/threads/${threadId}/runs/${created.body.run_id}/stream?stream_mode=keel`),
      ),
    );
    const url = await runningOn(threadId);
    return { threadId, url, streams: (await streams).map((stream) => durable(stream.events)) };
  };

  it('gives a client on either API the tokens of a call on either worker', async () => {
    const one = await harness.fleet.start();
    await ready(one);
    const onOne = await streamThroughEveryApi();
    // The second worker takes over; the first drains and leaves.
    const two = await harness.fleet.start();
    await ready(two);
    await one.stop('SIGTERM');
    const onTwo = await streamThroughEveryApi();
    expect(onOne.url).toBe(liveUrl(one));
    expect(onTwo.url).toBe(liveUrl(two));
    expect(onOne.url).not.toBe(onTwo.url);
    for (const { streams } of [onOne, onTwo])
      for (const events of streams) {
        expect(livePieces(events).length).toBeGreaterThan(5);
        expect(deltaText(events)).toBe(answerText(events));
      }
  });

  it('replaces the text of an attempt lost with its worker by the retried attempt’s', async () => {
    const first = await harness.fleet.start();
    await ready(first);
    const threadId = `k-${randomUUID()}`;
    const api = harness.apis[0]!;
    await call(api.url, 'POST', '/threads', { thread_id: threadId });
    let killed = false;
    const stream = readSse(
      `${api.url}/threads/${threadId}/runs/stream`,
      post(userInput(words(5), { stream_mode: 'keel', config: anthropicModel })),
      (event) => {
        // Mid-answer, on the first attempt's live text.
        if (!killed && event.eventId?.includes(':1:') === true && livePieces([event]).length === 1) {
          killed = true;
          first.kill('SIGKILL');
        }
        return false;
      },
    );
    await eventually(() => Promise.resolve(killed ? true : undefined), 60_000, 'live text before the kill');
    await first.exited;
    await harness.fleet.start();
    const events = durable((await stream).events);
    const deltas = events.filter((event) => event.event === 'message.delta');
    const attempts = new Set(deltas.map((event) => event.data.attempt as number));
    expect(attempts.has(1)).toBe(true);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
    // A client keeps the last attempt's text: exactly the answer, the lost attempt's dropped.
    expect(deltaText(events)).toBe(answerText(events));
    expect(livePieces(events.filter((event) => (event.data.attempt as number) > 1)).length).toBeGreaterThan(
      0,
    );
  });
});
