/**
 * The contract: `/openapi.json` is made from the schemas the routes validate with, every route
 * is in it, a wrong method answers 405 with `Allow`, and schemathesis (every check on) finds
 * nothing against a real API and worker on a real Temporal, the SSE operations included,
 * streaming a thread and a run the test made. Its three runs (with tokens, without, the streams)
 * go at once.
 *
 * Its Temporal runs on PostgreSQL, not the dev server: the streams' fuzzing opens and cancels
 * hundreds of streams, and a cancel can leave the dev server's one SQLite connection
 * `interrupted (9)` for good (decisions 0010, 0470).
 *
 * @jest-environment-options {"temporal": "cluster"}
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import pino from 'pino';
import { createApp } from '../../api/app';
import { expressPath } from '../../api/contract';
import { operations } from '../../api/operations';
import { apiHarness, call, userInput } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import { ensureVenv, hasPython } from '../helpers/python-venv';

const token = 'fuzz-token-0123456789';

/** Method and Express path of every route mounted on the app. */
function mountedRoutes(app: Express): string[] {
  const routes: string[] = [];
  const visit = (stack: unknown[]): void => {
    for (const layer of stack as Array<{
      route?: { path: string; methods: Record<string, boolean> };
      handle?: { stack?: unknown[] };
    }>) {
      if (layer.route !== undefined)
        for (const method of Object.keys(layer.route.methods))
          routes.push(`${method.toUpperCase()} ${layer.route.path}`);
      else if (layer.handle?.stack !== undefined) visit(layer.handle.stack);
    }
  };
  visit((app.router as unknown as { stack: unknown[] }).stack);
  return routes.sort();
}

/** What both APIs share. */
const contractEnv = {
  // The hooks point fuzzed webhooks here (test/python/schemathesis_hooks.py).
  KEEL_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  // On a loaded machine a worker can take more than the default 3 s to load a thread it has
  // just created; that answers 503 by design (no worker in time), which is not what this test
  // is about.
  KEEL_READ_TIMEOUT_MS: '20000',
  // A thread stream follows its thread for as long as it lives: bounded, so each fuzzed case
  // ends (the operator's setting, decision 0406), and short, as each valid one lasts that long;
  // a run stream ends with its run, which the instant scripted model ends well within it.
  KEEL_STREAM_MAX_S: '1',
};
// Both APIs are up for the whole file, so that their schemathesis runs can go at once.
const tokens = apiHarness(() => ({ ...contractEnv, KEEL_API_TOKENS: `fuzzer:${token}` }));
const noTokens = apiHarness(() => contractEnv);
const auth = { authorization: `Bearer ${token}` };

/**
 * The schemathesis runs, all started by the first test that asks for one: the default install
 * without the streams, its streams, and every operation with tokens.
 */
let fuzzing: Record<'noTokens' | 'streams' | 'tokens', Promise<FuzzOutcome>> | undefined;
/** The thread and run the streams' run reads. */
let streamsThread: Promise<Record<string, string>> | undefined;
function fuzzed(run: 'noTokens' | 'streams' | 'tokens'): Promise<FuzzOutcome> {
  if (fuzzing === undefined) {
    streamsThread = streamsExist(noTokens.base);
    fuzzing = {
      noTokens: runSchemathesis(noTokens.base, { log: '' }),
      // Beside it, on the same API: each valid stream case opens a real stream and cancels its
      // Temporal calls when it closes, which this file's Temporal on PostgreSQL survives.
      streams: streamsThread.then((hookEnv) =>
        runSchemathesis(noTokens.base, { streams: true, hookEnv, log: '-streams' }),
      ),
      // With tokens the streams are about what authentication changes: no thread of their own, so
      // a valid case answers at once (404, 401 without the token) rather than stream.
      tokens: runSchemathesis(tokens.base, { headers: [`Authorization: Bearer ${token}`], log: '-tokens' }),
    };
    // Awaited by their own tests; a failure before then is theirs to report, not unhandled.
    for (const outcome of Object.values(fuzzing)) outcome.catch(() => undefined);
  }
  return fuzzing[run];
}

/**
 * The thread and run the stream operations read (test/python/schemathesis_hooks.py), and where
 * the POST streams add runs: a thread with a finished tool turn.
 */
async function streamsExist(base: string): Promise<Record<string, string>> {
  const thread = await call<{ thread_id: string }>(base, 'POST', '/threads');
  const threadId = thread.body.thread_id;
  const run = await call<{ run_id: string }>(
    base,
    'POST',
    `/threads/${threadId}/runs`,
    userInput('run: echo contract'),
  );
  const runId = run.body.run_id;
  const joined = await call(base, 'GET', `/threads/${threadId}/runs/${runId}/join?timeout_s=60`);
  if (joined.status !== 200) throw new Error(`the streams' run did not finish: ${joined.status}`);
  return { KEEL_CONTRACT_THREAD: threadId, KEEL_CONTRACT_RUN: runId };
}

describe('the OpenAPI contract', () => {
  const harness = tokens;

  it('documents every route the app mounts, and mounts every route it documents', () => {
    const app = createApp({
      client: harness.client,
      config: harness.config,
      logger: pino({ level: 'silent' }),
    });
    const documented = operations.map((spec) => `${spec.method.toUpperCase()} ${expressPath(spec.path)}`);
    expect(mountedRoutes(app)).toEqual([...documented].sort());
  });

  it('answers a wrong method on a known path with 405 and the Allow the document gives', async () => {
    const document = (
      await call<{ paths: Record<string, Record<string, unknown>> }>(harness.base, 'GET', '/openapi.json')
    ).body;
    const response = await call(harness.base, 'PUT', '/threads/some-thread', { x: 1 }, auth);
    expect(response.status).toBe(405);
    expect(response.body).toMatchObject({
      error: { code: 'method_not_allowed', type: 'invalid_request_error' },
    });
    const documentedMethods = Object.keys(document.paths['/threads/{thread_id}']!).map((method) =>
      method.toUpperCase(),
    );
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(
      [...documentedMethods, 'HEAD', 'OPTIONS'].sort(),
    );
    const post = await call(harness.base, 'GET', '/threads/some-thread/limits', undefined, auth);
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('POST, OPTIONS');
    expect((await call(harness.base, 'GET', '/no/such/path', undefined, auth)).status).toBe(404);
    // A literal segment beats a parameter, as OpenAPI matches paths: `search` is not a thread id.
    const search = await call(harness.base, 'GET', '/threads/search', undefined, auth);
    expect(search.status).toBe(405);
    expect(search.headers.get('allow')).toBe('POST, OPTIONS');
    const options = await fetch(`${harness.base}/threads/some-thread/runs`, {
      method: 'OPTIONS',
      headers: auth,
    });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });

  it('refuses what the document forbids and accepts what it allows (the first-hour examples)', async () => {
    const created = await call<{ thread_id: string }>(harness.base, 'POST', '/threads', undefined, auth);
    expect(created.status).toBe(200);
    const threadId = created.body.thread_id;
    const blank = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs`,
      { input: { messages: [{ role: 'user', content: '' }] } },
      auth,
    );
    expect(blank).toMatchObject({ status: 422, body: { error: { param: 'input.messages.0.content' } } });
    expect((await call(harness.base, 'GET', '/runs?status=ready', undefined, auth)).status).toBe(422);
    expect((await call(harness.base, 'GET', '/runs?status=queued, running', undefined, auth)).status).toBe(
      200,
    );
    expect(
      (await call(harness.base, 'GET', `/threads/${threadId}/export?format=`, undefined, auth)).status,
    ).toBe(422);
    const run = await call<{ run_id: string }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs`,
      { input: { messages: [{ role: 'user', content: 'hello' }] } },
      auth,
    );
    const joined = await call(
      harness.base,
      'GET',
      `/threads/${threadId}/runs/${run.body.run_id}/join?timeout_s=0.0`,
      undefined,
      auth,
    );
    expect([200, 202]).toContain(joined.status);
    expect(
      (await call(harness.base, 'GET', `/threads/${threadId}/runs?limit=`, undefined, auth)).status,
    ).toBe(422);
    expect((await call(harness.base, 'POST', `/threads/${threadId}/limits`, undefined, auth)).status).toBe(
      422,
    );
    // Neither input nor command: LangGraph's run from the thread's current state (decision 0381).
    expect((await call(harness.base, 'POST', `/threads/${threadId}/runs`, undefined, auth)).status).toBe(200);
  });

  /** The body parsed with the schema the document gives for this operation and status. */
  const conforms = (method: string, path: string, response: { status: number; body: unknown }) => {
    const spec = operations.find((candidate) => candidate.method === method && candidate.path === path);
    const schema = spec?.responses[response.status as 200 | 202]?.schema;
    if (schema === undefined) throw new Error(`${method} ${path} documents no ${response.status} body`);
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) throw new Error(`${method} ${path} ${response.status}: ${parsed.error.message}`);
    // zod drops keys a schema does not name; the document forbids them, so nothing may be dropped.
    expect(parsed.data).toEqual(response.body);
  };

  it('answers an approval turn in the shapes the document gives (where the fuzzer holds no ids)', async () => {
    const created = await call<{ thread_id: string }>(
      harness.base,
      'POST',
      '/threads',
      { config: { approval: 'require' } },
      auth,
    );
    conforms('post', '/threads', created);
    const threadId = created.body.thread_id;
    const run = await call<{ run_id: string }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs`,
      { input: { messages: [{ role: 'user', content: 'run: echo contract' }] } },
      auth,
    );
    conforms('post', '/threads/{thread_id}/runs', run);
    const pending = await eventually(async () => {
      const response = await call<Array<{ approval_id: string }>>(
        harness.base,
        'GET',
        `/threads/${threadId}/approvals`,
        undefined,
        auth,
      );
      return response.body.length === 1 ? response : undefined;
    });
    conforms('get', '/threads/{thread_id}/approvals', pending);
    const decided = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/approvals/${pending.body[0]!.approval_id}`,
      { decision: 'approve' },
      auth,
    );
    conforms('post', '/threads/{thread_id}/approvals/{approval_id}', decided);
    const joined = await call(
      harness.base,
      'GET',
      `/threads/${threadId}/runs/${run.body.run_id}/join?timeout_s=30`,
      undefined,
      auth,
    );
    expect(joined.status).toBe(200);
    conforms('get', '/threads/{thread_id}/runs/{run_id}/join', joined);
    for (const [path, documented] of [
      [`/threads/${threadId}`, '/threads/{thread_id}'],
      [`/threads/${threadId}/runs`, '/threads/{thread_id}/runs'],
      [`/threads/${threadId}/runs/${run.body.run_id}`, '/threads/{thread_id}/runs/{run_id}'],
      [`/threads/${threadId}/state`, '/threads/{thread_id}/state'],
      [`/threads/${threadId}/history`, '/threads/{thread_id}/history'],
      [`/threads/${threadId}/export`, '/threads/{thread_id}/export'],
      [`/threads/${threadId}/debug`, '/threads/{thread_id}/debug'],
    ] as const)
      conforms('get', documented, await call(harness.base, 'GET', path, undefined, auth));
    const limited = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/limits`,
      { max_tokens: 10_000 },
      auth,
    );
    conforms('post', '/threads/{thread_id}/limits', limited);
  });

  (hasPython ? it : it.skip)(
    'passes schemathesis with every check on, tokens configured (every operation asks for one)',
    async () => {
      expectPassed(await fuzzed('tokens'));
    },
    1_200_000,
  );
});

describe('the OpenAPI contract of the default install (no tokens)', () => {
  const harness = noTokens;

  it('describes no security and no 401 when no token is configured, and /info says crons work', async () => {
    const document = (
      await call<{
        security?: unknown;
        components: Record<string, unknown>;
        paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
      }>(harness.base, 'GET', '/openapi.json')
    ).body;
    expect(document.security).toBeUndefined();
    expect(document.components.securitySchemes).toBeUndefined();
    const described = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    expect(described.filter((operation) => '401' in operation.responses)).toEqual([]);
    const ids = described.map((operation) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && id !== '')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await call(harness.base, 'GET', '/info')).body).toMatchObject({ flags: { crons: true } });
  });

  (hasPython ? it : it.skip)(
    'passes schemathesis with every check on, as `npm start` runs by default',
    async () => {
      expectPassed(await fuzzed('noTokens'));
    },
    1_200_000,
  );

  (hasPython ? it : it.skip)(
    'passes schemathesis with every check on the stream operations: their cursors, modes and events',
    async () => {
      expectPassed(await fuzzed('streams'));
      // Its fuzzing phase sent valid POST-stream bodies, each a run on the test's thread, and one
      // at least streamed to its end (the coverage phase sends them only invalid ones). Not every
      // one: a fuzzed body may delay its run, interrupt it, roll the one before back or cancel
      // it when its stream closes.
      const { KEEL_CONTRACT_THREAD: threadId, KEEL_CONTRACT_RUN: first } = await streamsThread!;
      const finished = await call<Array<{ run_id: string }>>(
        harness.base,
        'GET',
        `/threads/${threadId}/runs?status=success&limit=1000`,
      );
      const streamed = finished.body.filter((run) => run.run_id !== first);
      expect(streamed.length).toBeGreaterThanOrEqual(1);
    },
    1_200_000,
  );
});

interface FuzzOutcome {
  code: number | null;
  text: string;
  /** Where the report is kept after the run (the test directory is not). */
  log: string;
}

interface FuzzOptions {
  /** Sent with every request (a token). */
  headers?: string[];
  /** The SSE operations alone (true), or every other operation (false); with tokens, every one. */
  streams?: boolean;
  /** What the hooks read besides the webhook's address: the thread and run the streams read. */
  hookEnv?: Record<string, string>;
  /** The report's name after `keel-schemathesis`. */
  log: string;
}

/**
 * Runs schemathesis with every check against `base`. No check is excluded; the hooks only keep
 * a fuzzed request on this machine and name state a schema cannot
 * (test/python/schemathesis_hooks.py), and the configuration only sets examples per operation
 * (test/python/schemathesis.toml).
 */
async function runSchemathesis(
  base: string,
  { headers = [], streams = false, hookEnv = {}, log }: FuzzOptions,
): Promise<FuzzOutcome> {
  const bin = await ensureVenv({ name: 'schemathesis', requirement: 'schemathesis==4.32.5' });
  // Fuzzed webhooks are delivered here (test/python/schemathesis_hooks.py).
  const receiver: Server = createServer((_request, response) => response.writeHead(204).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const webhook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const withTokens = headers.length > 0;
  const python = path.join(__dirname, '..', 'python');
  const args = [
    '--config-file',
    path.join(python, 'schemathesis.toml'),
    'run',
    `${base}/openapi.json`,
    '--checks',
    'all',
    ...headers.flatMap((header) => ['--header', header]),
    // With tokens, fewer: the run without them covers what every request shape does; this one is
    // about what authentication changes, which a few examples of each operation show. The SSE
    // operations, fewer too: each valid case streams.
    '--max-examples',
    withTokens || streams ? '10' : '25',
    // With tokens the run is about what authentication changes, which every phase checks: the
    // coverage phase's systematic cases (most of the time) run once, without tokens.
    ...(withTokens ? ['--phases', 'fuzzing,stateful'] : []),
    '--seed',
    '20261123',
    '--workers',
    '1',
    '--request-timeout',
    '30',
    // Without tokens the SSE operations have a run of their own, with fewer examples.
    ...(withTokens ? [] : [streams ? '--include-tag' : '--exclude-tag', 'stream']),
    '--generation-database',
    'none',
    '--no-color',
  ];
  const output = await new Promise<{ code: number | null; text: string }>((resolve, reject) => {
    // `python -m`: the venv was made aside and moved, so its scripts' first lines name a path
    // that is gone.
    const child = spawn(path.join(bin, 'python'), ['-m', 'schemathesis.cli', ...args], {
      env: {
        ...process.env,
        SCHEMATHESIS_HOOKS: 'schemathesis_hooks',
        KEEL_CONTRACT_WEBHOOK: webhook,
        ...hookEnv,
        PYTHONPATH: python,
      },
      // Schemathesis keeps a cache in its working directory: not in the repository.
      cwd: process.env.KEEL_TEST_DIR ?? os.tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, text }));
  }).finally(() => receiver.close());
  const kept = path.join(os.tmpdir(), `keel-schemathesis${log}.log`);
  await writeFile(kept, output.text);
  return { ...output, log: kept };
}

/** Fails with schemathesis's report unless it found nothing. */
function expectPassed(outcome: FuzzOutcome): void {
  if (outcome.code !== 0) process.stderr.write(`${outcome.text}\n(also in ${outcome.log})\n`);
  expect(outcome.text).toMatch(/No issues found|passed/);
  expect(outcome.code).toBe(0);
}
