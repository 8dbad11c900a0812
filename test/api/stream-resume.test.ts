/**
 * A real SSE client (`eventsource`) that loses its connection mid-answer, twice: once dropped on
 * the wire, once because the API process is SIGKILLed and started again. Reconnecting with
 * Last-Event-ID, it must see exactly the events a clean single stream shows: no gap, no repeat.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventSource, type FetchLike } from 'eventsource';
import type { KeelConfig } from '../../platform/config';
import type { Run } from '../../common/run';
import { call, freePort, userInput } from '../helpers/api';
import { deltaText, durable, idsIncrease, readSse, type SseEvent } from '../helpers/sse';
import { parseStreamId } from '../../common/stream-ids';
import { testEncryptionKeys } from '../helpers/encryption';
import { eventually, testAddress } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(180_000);

/** `keel api` as its own process, on a fixed port so a restarted one is found at the same URL. */
async function startApiProcess(config: KeelConfig, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/keel.ts', 'api'], {
    cwd: path.resolve(__dirname, '../..'),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: testAddress(),
      KEEL_TASK_QUEUE: config.taskQueue,
      KEEL_DATA_DIR: config.dataDir,
      KEEL_MODEL: 'scripted:typewriter',
      KEEL_API_PORT: String(port),
      KEEL_LOG_LEVEL: 'warn',
      KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await eventually(
    async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
      return response?.ok === true ? true : undefined;
    },
    60_000,
    'the API process to listen',
  );
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('an SSE client that reconnects with Last-Event-ID', () => {
  let api: ChildProcess | undefined;
  // Declared before the harness: jest-circus runs afterAll hooks in declaration order, and the
  // API process goes before the worker.
  afterAll(async () => {
    if (api !== undefined) await kill(api);
  });
  const setup = workerHarness(() => ({ KEEL_MODEL: 'scripted:typewriter' }));

  it('loses nothing and repeats nothing across a dropped connection and an API process killed and restarted', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    api = await startApiProcess(setup.config, port);
    const threadId = `r-${randomUUID()}`;
    await call(base, 'POST', '/threads', { thread_id: threadId });
    const words = Array.from({ length: 80 }, (_, index) => `word${index}`).join(' ');
    const created = await call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput(words));
    const runId = created.body.run_id;

    // Every connection's body goes through here, so the test can cut one as a network would.
    const cuts: ((error: Error) => void)[] = [];
    const lastEventIds: (string | null)[] = [];
    const cuttingFetch: FetchLike = async (url, init) => {
      lastEventIds.push((init.headers as Record<string, string>)['Last-Event-ID'] ?? null);
      const response = await fetch(url, init);
      let cut: (error: Error) => void = () => undefined;
      const body = response.body?.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          start(controller) {
            cut = (error) => controller.error(error);
          },
        }),
      );
      cuts.push((error) => cut(error));
      return new Response(body, { status: response.status, headers: response.headers });
    };

    const received: SseEvent[] = [];
    const source = new EventSource(`${base}/threads/${threadId}/runs/${runId}/stream?stream_mode=keel`, {
      fetch: cuttingFetch,
    });
    let deltas = 0;
    const ended = new Promise<void>((resolve) => {
      const names = ['metadata', 'heartbeat', 'end', 'run.created', 'run.started', 'run.completed'];
      for (const name of [...names, 'message.delta', 'message.completed', 'usage.updated']) {
        source.addEventListener(name, (message) => {
          const durableEvent = !['metadata', 'heartbeat', 'end'].includes(name);
          received.push({
            ...(durableEvent
              ? { id: parseStreamId(message.lastEventId)!.offset, eventId: message.lastEventId }
              : {}),
            event: name,
            data: JSON.parse(message.data as string) as Record<string, unknown>,
          });
          if (name === 'message.delta') deltas++;
          if (name === 'end') {
            source.close();
            resolve();
          }
        });
      }
    });

    await eventually(() => Promise.resolve(deltas >= 2 ? true : undefined), 30_000, 'the first deltas');
    cuts.at(-1)!(new TypeError('connection reset'));
    await eventually(
      () => Promise.resolve(cuts.length >= 2 && deltas >= 5 ? true : undefined),
      30_000,
      'a reconnect',
    );
    await kill(api);
    await sleep(1_500);
    api = await startApiProcess(setup.config, port);
    await ended;

    const run = (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`)).body;
    expect(run.status).toBe('completed');
    expect(cuts.length).toBeGreaterThanOrEqual(3);
    expect(lastEventIds[0]).toBeNull();
    expect(lastEventIds.slice(1).every((id) => id !== null)).toBe(true);

    const clean = await readSse(`${base}/threads/${threadId}/runs/${runId}/stream?stream_mode=keel`);
    const got = durable(received);
    // The text streamed live in pieces, where a replay of the finished run has it in one: the
    // same text, and every other event the same, each once, in order.
    const listened = durable(clean.events).filter((event) => event.event !== 'message.started');
    const besidesText = (events: SseEvent[]) =>
      events.filter((event) => event.event !== 'message.delta').map(({ event, data }) => ({ event, data }));
    expect(besidesText(got)).toEqual(besidesText(listened));
    expect(deltaText(got)).toBe(deltaText(listened));
    expect(deltaText(got).length).toBeGreaterThan(100);
    expect(idsIncrease(got)).toBe(true);
    expect(got.filter((event) => event.event === 'message.delta').length).toBeGreaterThan(5);
  });
});
