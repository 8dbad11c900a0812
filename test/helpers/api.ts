/** An API process in miniature: the real Express app over a real client, on an ephemeral port. */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { startApi, type RunningApi } from '../../api/server';
import type { KeelConfig } from '../../platform/config';
import { closeTestClient, testClient, testConfig } from './temporal';
import { workerHarness, type WorkerHarness } from './worker-harness';
import { startWorkerProcess, type WorkerProcess } from './worker-process';
import {
  toLangChainMessages,
  type LangChainMessage,
  type ToolMessage,
} from '../../api/protocol/langchain-messages';
import { getTranscriptQuery } from '../../common/messages';
import { workflowIdFor } from '../../common/thread';
import { freePort } from '../setup/free-port';
export { freePort };

/** An API on loopback, silent, on `port` (an ephemeral one by default). */
export async function startTestApi(client: Client, config: KeelConfig, port = 0): Promise<RunningApi> {
  return startApi({ client, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port });
}

/**
 * A second API beside a harness's, on the same client, for one describe block: its config is
 * `configure`'s (read in `beforeAll`, after the harness started); it stops in `afterAll`.
 */
export function apiBeside(
  harness: WorkerHarness,
  configure: (config: KeelConfig) => KeelConfig | Promise<KeelConfig>,
): { readonly url: string } {
  let api: RunningApi | undefined;
  beforeAll(async () => {
    api = await startTestApi(harness.client, await configure(harness.config));
  });
  afterAll(async () => {
    await api?.stop();
  });
  return {
    get url() {
      if (api === undefined) throw new Error('the API beside starts in beforeAll');
      return api.url;
    },
  };
}

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** Sends JSON (or a raw string body) and parses the JSON answer. */
export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (text === '' ? {} : JSON.parse(text)) as T,
  };
}

/** Creates a thread `<prefix>-<uuid>` (the API must answer 200) and returns its id. */
export async function createThread(
  base: string,
  prefix: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const threadId = `${prefix}-${randomUUID()}`;
  expect((await call(base, 'POST', '/threads', { thread_id: threadId }, headers)).status).toBe(200);
  return threadId;
}

/** `POST /threads/{threadId}/runs/wait` with `body`; `query` is what follows the `?` (`timeout_s=60`). */
export function waitRun<T = Record<string, unknown>>(
  base: string,
  threadId: string,
  body: unknown,
  query = '',
): Promise<JsonResponse<T>> {
  return call<T>(base, 'POST', `/threads/${threadId}/runs/wait${query === '' ? '' : `?${query}`}`, body);
}

export const userInput = (content: string, extra: Record<string, unknown> = {}) => ({
  input: { messages: [{ role: 'user', content }] },
  ...extra,
});

/** A thread's whole transcript in LangChain's view, serialized: what `runs/wait` must answer byte for byte. */
export async function wholeValues(client: Client, threadId: string): Promise<string> {
  const transcript = await client.workflow.getHandle(workflowIdFor(threadId)).query(getTranscriptQuery, {});
  return JSON.stringify({ messages: toLangChainMessages(transcript) });
}

export interface ApiHarness extends WorkerHarness {
  api: RunningApi;
  /** The API's URL. */
  base: string;
}

/**
 * A worker and an API on a fresh task queue for one describe block (set up in `beforeAll`,
 * stopped in `afterAll`, the API before the worker). `env` is read when the block starts, after
 * earlier `beforeAll`s ran.
 */
export function apiHarness(env: () => Record<string, string> = () => ({})): ApiHarness {
  return workerHarness<ApiHarness>(
    env,
    {},
    {
      async afterStart(harness) {
        harness.api = await startTestApi(harness.client, harness.config);
        harness.base = harness.api.url;
      },
      async beforeStop(harness) {
        await harness.api?.stop();
      },
    },
  );
}

export interface ProcessApiHarness {
  client: Client;
  config: KeelConfig;
  /** A real `keel worker` process: its environment is its own, as in production. */
  worker: WorkerProcess;
  api: RunningApi;
  base: string;
}

/**
 * Like `apiHarness`, but the worker is a real process started with `env` on top of the test's
 * configuration, plus `workerOnly` that the API does not get (for what only a separate process
 * shows: its environment, its pid).
 */
export function processApiHarness(
  env: () => Record<string, string> = () => ({}),
  workerOnly: () => Record<string, string> = () => ({}),
): ProcessApiHarness {
  const harness = {} as ProcessApiHarness;
  beforeAll(async () => {
    const variables = env();
    harness.client = await testClient();
    harness.config = await testConfig(variables);
    harness.worker = await startWorkerProcess({
      env: {
        KEEL_TASK_QUEUE: harness.config.taskQueue,
        KEEL_DATA_DIR: harness.config.dataDir,
        ...variables,
        ...workerOnly(),
      },
    });
    harness.api = await startTestApi(harness.client, harness.config);
    harness.base = harness.api.url;
  });
  afterAll(async () => {
    await harness.api.stop();
    harness.worker.kill('SIGTERM');
    await harness.worker.exited;
    await closeTestClient();
  });
  return harness;
}

/** The status of the run a task (MCP's or A2A's, `<thread_id>:<run_id>`) is, read through the HTTP API. */
export async function runStatusOfTask(base: string, taskId: string, token: string): Promise<string> {
  const [threadId, runId] = taskId.split(':');
  const run = await call<{ status: string }>(base, 'GET', `/threads/${threadId}/runs/${runId}`, undefined, {
    authorization: `Bearer ${token}`,
  });
  return run.body.status;
}

/**
 * SIGKILLs the harness's worker, as a dead machine stops, and starts a new worker process on the
 * same task queue and data dir (with `env` besides), ready to poll. The caller kills it at the end.
 */
export async function replaceKilledWorker(
  harness: ProcessApiHarness,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  harness.worker.kill('SIGKILL');
  await harness.worker.exited;
  const next = await startWorkerProcess({
    env: { KEEL_TASK_QUEUE: harness.config.taskQueue, KEEL_DATA_DIR: harness.config.dataDir, ...env },
  });
  await next.waitForLog((line) => line.msg === 'worker ready');
  return next;
}

/** What `promise` rejects with, expected to be an instance of `type` (it fails the test if not). */
export async function rejectionOf<E>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}

/** The HTTP status and Keel error body of a failed LangGraph SDK call. */
export async function failureOf(
  promise: Promise<unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const { status, text } = error as { status: number; text: string };
    return { status, body: JSON.parse(text) as Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

/** A tool call's result as the thread's answer carries it. */
export interface ToolOutput {
  content: string;
  is_error: boolean;
}

/**
 * Sends scripted tool lines (`run:`, `read:`, `write:` …) as one waited message, with `headers`
 * (a caller's token); returns each line's tool result in order, and the whole answer.
 */
export async function sendToolLines(
  base: string,
  threadId: string,
  lines: string[],
  headers: Record<string, string> = {},
): Promise<{ results: ToolOutput[]; body: string }> {
  const response = await call<{ messages: LangChainMessage[] }>(
    base,
    'POST',
    `/threads/${threadId}/runs/wait`,
    userInput(lines.join('\n')),
    headers,
  );
  expect(response.status).toBe(200);
  const results = response.body.messages
    .filter((message): message is ToolMessage => message.type === 'tool')
    .slice(-lines.length);
  expect(results).toHaveLength(lines.length);
  return {
    results: results.map((result) => ({ content: result.content, is_error: result.status === 'error' })),
    body: JSON.stringify(response.body),
  };
}
