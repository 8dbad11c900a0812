/**
 * Encryption at rest, proven on a Temporal dev server of its own with its SQLite file (and WAL)
 * in a directory this test reads byte by byte: canaries sent through the API are nowhere in it,
 * while the API and the codec endpoint show them; keys rotate without losing a thread; a thread
 * whose key was removed answers a clear error while the others go on.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { RunningApi } from '../../api/server';
import { type DevServer, startDevServer } from '../../launch/dev-server';
import { loadDataConverter } from '../../codec/data-converter';
import { type KeelConfig, parseConfig } from '../../platform/config';
import { workflowIdFor } from '../../common/thread';
import { createKeelWorker } from '../../worker/create-worker';
import { call, freePort, startTestApi, userInput, waitRun } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';

const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

interface Keel {
  config: KeelConfig;
  client: Client;
  api: RunningApi;
  base: string;
  stop(): Promise<void>;
}

/** Every file under `directory`, each read whole. */
async function filesUnder(directory: string): Promise<{ file: string; bytes: Buffer }[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => {
        const file = path.join(entry.parentPath, entry.name);
        return { file, bytes: await readFile(file) };
      }),
  );
}

/**
 * Every payload in a raw (still encoded) history: any object with metadata and data. Those
 * under `searchAttributes` (indexed for visibility), in markers (the SDK's own `patched()`
 * records, holding a patch id) and the trace context header (`_tracer-data`, a traceparent;
 * decision 0122) are kept apart: the SDK never passes any of them through the codec.
 */
function payloadsIn(
  value: unknown,
  found = {
    content: [] as Payload[],
    searchAttributes: [] as Payload[],
    markers: [] as Payload[],
    traceContext: [] as Payload[],
  },
  kind: 'content' | 'searchAttributes' | 'markers' | 'traceContext' = 'content',
) {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return found;
  const record = value as Record<string, unknown>;
  if (
    'metadata' in record &&
    'data' in record &&
    record.metadata !== null &&
    record.data instanceof Uint8Array
  )
    found[kind].push(record);
  else
    for (const [name, child] of Object.entries(record))
      payloadsIn(
        child,
        found,
        name === 'searchAttributes'
          ? 'searchAttributes'
          : name === 'markerRecordedEventAttributes'
            ? 'markers'
            : name === '_tracer-data'
              ? 'traceContext'
              : kind,
      );
  return found;
}

const metadataText = (payload: Payload, name: string) =>
  Buffer.from(payload.metadata?.[name] ?? new Uint8Array()).toString('utf8');

describe('encryption at rest', () => {
  let server: DevServer;
  let temporalDir: string;
  let keelDir: string;
  const taskQueue = `encrypted-${randomUUID()}`;

  /** A worker, a client and an API with `keys`, on the dedicated server, sharing one data dir. */
  async function startKeel(keys: string, env: Record<string, string> = {}): Promise<Keel> {
    const config = parseConfig(
      {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TEMPORAL_ADDRESS: server.address,
        KEEL_TASK_QUEUE: taskQueue,
        KEEL_DATA_DIR: keelDir,
        KEEL_MODEL: 'scripted:demo',
        KEEL_LOG_LEVEL: 'warn',
        KEEL_ENCRYPTION_KEYS: keys,
        ...env,
      },
      process.cwd(),
    );
    const dataConverter = await loadDataConverter(config.encryption);
    const connection = await NativeConnection.connect({ address: server.address });
    const worker: Worker = await createKeelWorker({
      connection,
      namespace: 'default',
      taskQueue,
      activities: createActivities({ config }),
      dataConverter,
      workflowBundlePath: process.env.KEEL_TEST_BUNDLE!,
      shutdownGraceS: 1,
    });
    const running = worker.run();
    const client = new Client({
      connection: await Connection.connect({ address: server.address, interceptors: guardedInterceptors() }),
      dataConverter,
    });
    const api = await startTestApi(client, config);
    return {
      config,
      client,
      api,
      base: api.url,
      async stop() {
        await api.stop();
        worker.shutdown();
        await running;
        await connection.close();
        await client.connection.close();
      },
    };
  }

  const newThread = async (keel: Keel, body: Record<string, unknown> = {}) => {
    const created = await call<{ thread_id: string }>(keel.base, 'POST', '/threads', body);
    expect(created.status).toBe(200);
    return created.body.thread_id;
  };
  const ask = async (keel: Keel, threadId: string, text: string) => {
    const response = await waitRun(keel.base, threadId, userInput(text), 'timeout_s=30');
    expect(response.status).toBe(200);
    return JSON.stringify(response.body);
  };
  const stateOf = (keel: Keel, threadId: string) => call(keel.base, 'GET', `/threads/${threadId}/state`);
  const rawHistory = async (keel: Keel, threadId: string) =>
    keel.client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: workflowIdFor(threadId) },
    });

  beforeAll(async () => {
    const root = process.env.KEEL_TEST_DIR ?? os.tmpdir();
    temporalDir = await mkdtemp(path.join(root, 'temporal-at-rest-'));
    keelDir = await mkdtemp(path.join(root, 'keel-at-rest-'));
    const port = await freePort();
    server = await startDevServer({
      cliPath: process.env.KEEL_TEST_CLI_PATH!,
      dataDir: temporalDir,
      port,
      uiPort: await freePort(),
      namespace: 'default',
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('reads threads written with key A after switching to B with A kept; without A only those threads fail, plainly', async () => {
    const keyA = newKey('A');
    const keyB = newKey('B');
    const alpha = `alpha-${randomUUID()}`;
    const beta = `beta-${randomUUID()}`;

    const withA = await startKeel(keyA);
    let first: string;
    try {
      first = await newThread(withA);
      expect(await ask(withA, first, `remember ${alpha}`)).toContain(alpha);
    } finally {
      await withA.stop();
    }

    const rotated = await startKeel(`${keyB},${keyA}`);
    let second: string;
    try {
      expect(JSON.stringify((await stateOf(rotated, first)).body)).toContain(alpha);
      second = await newThread(rotated);
      expect(await ask(rotated, second, `remember ${beta}`)).toContain(beta);
      // New data is written with the first key, B; the older thread's first events stay under A.
      const keyIds = (history: Awaited<ReturnType<typeof rawHistory>>) =>
        new Set(
          payloadsIn(history.history?.events).content.map((payload) =>
            metadataText(payload, 'encryption-key-id'),
          ),
        );
      expect(keyIds(await rawHistory(rotated, second))).toEqual(new Set(['B']));
      expect(keyIds(await rawHistory(rotated, first))).toContain('A');
    } finally {
      await rotated.stop();
    }

    const withoutA = await startKeel(keyB);
    try {
      const lost = await call<{ error: { code: string; message: string } }>(
        withoutA.base,
        'GET',
        // Not GET /threads/:id: it queries the worker alongside, and that query outlives the answer.
        `/threads/${first}/state`,
      );
      expect(lost.status).toBe(500);
      expect(lost.body.error.code).toBe('thread_undecryptable');
      expect(lost.body.error.message).toMatch(/encrypted with key "A".*KEEL_ENCRYPTION_KEYS/);
      // Listing goes on past it (without its metadata); the other thread reads and runs as before.
      const listed = await call<{ thread_id: string }[]>(withoutA.base, 'POST', '/threads/search', {});
      expect(listed.status).toBe(200);
      expect(listed.body.map(({ thread_id }) => thread_id)).toEqual(expect.arrayContaining([first, second]));
      expect(JSON.stringify((await stateOf(withoutA, second)).body)).toContain(beta);
      expect(await ask(withoutA, second, 'still there?')).toContain('still there?');
    } finally {
      await withoutA.stop();
    }

    // A key under the right id but with other bytes is refused by the tag, never read as garbage.
    const impostor = await startKeel(`${keyB},${newKey('A')}`);
    try {
      const wrong = await call<{ error: { code: string; message: string } }>(
        impostor.base,
        'GET',
        `/threads/${first}/state`,
      );
      expect(wrong.status).toBe(500);
      expect(wrong.body.error.message).toMatch(/does not decrypt with the configured key "A"/);
    } finally {
      await impostor.stop();
    }
  }, 240_000);

  it('keeps a canary in a user message, a tool output, a model answer and an approval reason out of every file of the Temporal store, while the API and the codec endpoint show it', async () => {
    const canary = `canary${randomBytes(12).toString('hex')}`;
    const keys = newKey('K');
    const keel = await startKeel(keys, { KEEL_APPROVAL: 'require' });
    let threadId: string;
    try {
      threadId = await newThread(keel);
      const approvals = async () =>
        eventually(async () => {
          const response = await call<{ approval_id: string }[]>(
            keel.base,
            'GET',
            `/threads/${threadId}/approvals`,
          );
          return response.body.length === 1 ? response.body[0]! : undefined;
        });
      const join = (runId: string) => call(keel.base, 'GET', `/threads/${threadId}/runs/${runId}/join`);

      // The tool prints `<canary>-tool`, a string the message itself does not contain.
      const first = await call<{ run_id: string }>(
        keel.base,
        'POST',
        `/threads/${threadId}/runs`,
        userInput(`note ${canary}-user\nrun: printf '%s-%s\\n' ${canary} tool`),
      );
      const approval = await approvals();
      expect(
        (
          await call(keel.base, 'POST', `/threads/${threadId}/approvals/${approval.approval_id}`, {
            decision: 'approve',
          })
        ).status,
      ).toBe(200);
      const answered = JSON.stringify((await join(first.body.run_id)).body);
      expect(answered).toContain(`${canary}-tool`);

      const second = await call<{ run_id: string }>(
        keel.base,
        'POST',
        `/threads/${threadId}/runs`,
        userInput('run: echo not-this-one'),
      );
      const denial = await approvals();
      await call(keel.base, 'POST', `/threads/${threadId}/approvals/${denial.approval_id}`, {
        decision: 'deny',
        reason: `${canary}-reason`,
      });
      await join(second.body.run_id);

      // The API shows everything.
      const stateBody = (await stateOf(keel, threadId)).body as {
        values: { messages: { type: string; content: string }[] };
      };
      const state = JSON.stringify(stateBody);
      for (const part of ['user', 'tool', 'reason']) expect(state).toContain(`${canary}-${part}`);
      // The model's answer quotes the tool output it was given.
      const answers = stateBody.values.messages
        .filter(({ type }) => type === 'ai')
        .map(({ content }) => content)
        .join('\n');
      expect(answers).toMatch(new RegExp(`Scripted model.*${canary}-tool`, 's'));
      expect(answers).toContain(`${canary}-reason`);

      // Temporal holds only ciphertext: every payload of the history is encrypted with K.
      const history = await rawHistory(keel, threadId);
      const {
        content: payloads,
        searchAttributes,
        markers,
        traceContext,
      } = payloadsIn(history.history?.events);
      for (const marker of markers)
        expect(Buffer.from(marker.data ?? []).toString('utf8')).toMatch(
          /^\{"id":"[a-z-]+","deprecated":false\}$/,
        );
      // The trace context header holds ids only.
      for (const header of traceContext)
        expect(Buffer.from(header.data ?? []).toString('utf8')).toMatch(
          /^\{"traceparent":"00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]"\}$/,
        );
      // Search attributes stay readable for visibility queries, and carry no content.
      const indexed = searchAttributes.map((payload) => Buffer.from(payload.data ?? []).toString('utf8'));
      expect(indexed.length).toBeGreaterThan(0);
      expect(indexed.join('\n')).not.toContain(canary);
      expect(payloads.length).toBeGreaterThan(10);
      const unencrypted = payloads
        .filter((payload) => metadataText(payload, 'encryption-key-id') !== 'K')
        .map((payload) => ({ ...payload, data: Buffer.from(payload.data ?? []).toString('utf8') }));
      expect(unencrypted).toEqual([]);
      expect(JSON.stringify(history.toJSON())).not.toContain(canary);

      // The codec endpoint (what the Web UI calls) decrypts them.
      const decoded = await call<{ payloads: { data: string }[] }>(
        keel.base,
        'POST',
        '/codec/decode',
        {
          payloads: payloads.map((payload) => ({
            metadata: Object.fromEntries(
              Object.entries(payload.metadata ?? {}).map(([name, value]) => [
                name,
                Buffer.from(value ?? []).toString('base64'),
              ]),
            ),
            data: Buffer.from(payload.data ?? []).toString('base64'),
          })),
        },
        { 'X-Namespace': 'default' },
      );
      expect(decoded.status).toBe(200);
      const plain = decoded.body.payloads
        .map(({ data }) => Buffer.from(data, 'base64').toString('utf8'))
        .join('\n');
      for (const part of ['user', 'tool', 'reason']) expect(plain).toContain(`${canary}-${part}`);

      // A control: a payload written without the codec is found by the same search, so the
      // search can fail.
      const control = `control${randomBytes(12).toString('hex')}`;
      const plainClient = new Client({
        connection: await Connection.connect({
          address: server.address,
          interceptors: guardedInterceptors(),
        }),
      });
      try {
        await plainClient.workflow.start('nothingPollsThis', {
          taskQueue: `control-${randomUUID()}`,
          workflowId: `control-${randomUUID()}`,
          args: [{ note: control }],
        });
      } finally {
        await plainClient.connection.close();
      }

      const search = async () => {
        const files = await filesUnder(temporalDir);
        expect(files.map(({ file }) => path.basename(file))).toEqual(expect.arrayContaining(['temporal.db']));
        return {
          canary: files.filter(({ bytes }) => bytes.includes(canary)).map(({ file }) => file),
          control: files.filter(({ bytes }) => bytes.includes(control)).map(({ file }) => file),
        };
      };
      const live = await search();
      expect(live.control.length).toBeGreaterThan(0);
      expect(live.canary).toEqual([]);
    } finally {
      await keel.stop();
    }
    // Stopped, the server checkpoints its WAL into the database file: still nothing.
    await server.stop();
    const files = await filesUnder(temporalDir);
    expect(files.filter(({ bytes }) => bytes.includes(canary)).map(({ file }) => file)).toEqual([]);
  }, 240_000);
});
