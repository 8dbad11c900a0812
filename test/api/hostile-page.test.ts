/**
 * A hostile web page against the default install (loopback, no tokens, no CORS): what a page on
 * another origin can make a browser send without asking first — `text/plain`, form, untyped and
 * no bodies, a form submission, a request under a rebound name — changes and reads nothing. Raw
 * requests say exactly what a browser would send; then a real Chromium on another origin tries.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { parseConfig } from '../../platform/config';
import { chromiumPath } from '../web/browser';
import { apiBeside, apiHarness, call, userInput } from '../helpers/api';

jest.setTimeout(120_000);

const evilOrigin = 'http://evil.example';
const wipeEverything = JSON.stringify({ older_than_days: 0, dry_run: false });

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { type: string; code: string; message: string }; detail?: string } & Record<
    string,
    unknown
  >;
}

/** Exactly these headers and body, as a browser (or a rebinding page) would send them. */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const sent = httpRequest(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }) },
    });
    sent.on('error', reject);
    sent.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: (text === '' ? {} : JSON.parse(text)) as RawAnswer['body'],
        }),
      );
    });
    sent.end(body);
  });
}

describe('a hostile web page against the default install', () => {
  const harness = apiHarness();
  const threadIds: string[] = [];

  /** Every thread is still there, readable, with its conversation. */
  const expectIntact = async () => {
    for (const threadId of threadIds) {
      const thread = await call<{ messages_count: number }>(harness.base, 'GET', `/threads/${threadId}`);
      expect({ threadId, status: thread.status }).toEqual({ threadId, status: 200 });
      expect(thread.body.messages_count).toBeGreaterThanOrEqual(2);
    }
    const found = await call<Array<{ thread_id: string }>>(harness.base, 'POST', '/threads/search', {
      limit: 1000,
    });
    expect(found.body.map(({ thread_id }) => thread_id)).toEqual(expect.arrayContaining(threadIds));
  };

  beforeAll(async () => {
    for (let index = 0; index < 3; index++) {
      const threadId = `kept-${randomUUID()}`;
      await call(harness.base, 'POST', '/threads', { thread_id: threadId });
      const answered = await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('hello'));
      expect(answered.status).toBe(200);
      threadIds.push(threadId);
    }
  });

  it('would lose every thread to the cleanup a page sends, were it JSON: a dry run lists them all', async () => {
    const dryRun = await call<{ thread_ids?: string[]; threads?: Array<{ thread_id: string }> }>(
      harness.base,
      'POST',
      '/threads/cleanup',
      { older_than_days: 0 },
    );
    expect(dryRun.status).toBe(200);
    expect(JSON.stringify(dryRun.body)).toEqual(expect.stringContaining(threadIds[0] as string));
  });

  const simpleBodies: Array<[string, Record<string, string>, string]> = [
    ['text/plain', { 'content-type': 'text/plain;charset=UTF-8' }, wipeEverything],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }, `${wipeEverything}=`],
    [
      'a multipart form',
      { 'content-type': 'multipart/form-data; boundary=x' },
      `--x\r\nContent-Disposition: form-data; name="${wipeEverything}"\r\n\r\n\r\n--x--\r\n`,
    ],
    ['an untyped body', {}, wipeEverything],
  ];

  it.each(simpleBodies)(
    'refuses cleanup sent as %s from another origin with 403, without an Origin with 415, and no thread is deleted',
    async (_kind, headers, body) => {
      const fromPage = await raw(
        harness.base,
        'POST',
        '/threads/cleanup',
        { origin: evilOrigin, ...headers },
        body,
      );
      expect(fromPage.status).toBe(403);
      expect(fromPage.body.error?.code).toBe('origin_not_allowed');
      expect(fromPage.headers['access-control-allow-origin']).toBeUndefined();
      // Without an Origin (no browser said where it came from) the JSON-only door holds (0310).
      const unsaid = await raw(harness.base, 'POST', '/threads/cleanup', headers, body);
      expect(unsaid.status).toBe(415);
      expect(unsaid.body).toMatchObject({
        error: { type: 'invalid_request_error', code: 'unsupported_media_type', message: expect.any(String) },
        detail: unsaid.body.error?.message,
      });
      await expectIntact();
    },
  );

  it.each([
    ['create a thread', () => '/threads', () => JSON.stringify({ thread_id: 'planted' })],
    ['start a run', () => `/threads/${threadIds[0]}/runs`, () => JSON.stringify(userInput('run: rm -rf ~'))],
    ['wait on a run', () => `/threads/${threadIds[0]}/runs/wait`, () => JSON.stringify(userInput('run: id'))],
    ['run without a thread', () => '/runs/wait', () => JSON.stringify(userInput('run: id'))],
    ['copy a thread', () => `/threads/${threadIds[1]}/copy`, () => '{}'],
    ['search threads', () => '/threads/search', () => '{}'],
  ])('refuses a page that tries to %s with text/plain (403, its origin)', async (_what, path, body) => {
    const before = await call<{ messages_count: number }>(harness.base, 'GET', `/threads/${threadIds[0]}`);
    const answer = await raw(
      harness.base,
      'POST',
      path(),
      { origin: evilOrigin, 'content-type': 'text/plain' },
      body(),
    );
    expect(answer.status).toBe(403);
    expect((await call(harness.base, 'GET', '/threads/planted')).status).toBe(404);
    const after = await call<{ messages_count: number }>(harness.base, 'GET', `/threads/${threadIds[0]}`);
    expect(after.body.messages_count).toBe(before.body.messages_count);
  });

  it('takes a body-less POST without an Origin (an SDK) as an empty body: a cleanup names no age and deletes nothing', async () => {
    const answer = await raw(harness.base, 'POST', '/threads/cleanup', {});
    expect(answer.status).toBe(422);
    expect(answer.body.error?.code).toBe('validation_error');
    await expectIntact();
  });

  const threadCount = async () => {
    const counted = await call<number>(harness.base, 'POST', '/threads/count', {});
    expect(counted.status).toBe(200);
    return counted.body;
  };

  it.each<[string, string, string, () => string]>([
    ['a body-less POST creating a thread from another origin', evilOrigin, 'POST', () => '/threads'],
    ['a DELETE of a thread from another origin', evilOrigin, 'DELETE', () => `/threads/${threadIds[2]}`],
    ['a body-less POST from Origin: null (a sandboxed frame, a file)', 'null', 'POST', () => '/threads'],
  ])(
    'refuses %s with 403 naming KEEL_API_CORS_ORIGINS, and nothing is created or deleted',
    async (_what, origin, method, path) => {
      const before = await threadCount();
      const answer = await raw(harness.base, method, path(), { origin });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({
        error: { type: 'permission_error', code: 'origin_not_allowed', message: expect.any(String) },
        detail: answer.body.error?.message,
      });
      expect(answer.body.error?.message).toContain('KEEL_API_CORS_ORIGINS');
      expect(await threadCount()).toBe(before);
      await expectIntact();
    },
  );

  it.each([
    ['with no Origin (curl, the SDKs, the CLI)', () => ({})],
    ['from its own origin (the web chat)', () => ({ origin: harness.base })],
    [
      'from its own origin named as localhost',
      () => ({
        origin: harness.base.replace('127.0.0.1', 'localhost'),
        host: harness.base.replace(/^http:\/\/127\.0\.0\.1/, 'localhost'),
      }),
    ],
  ])('takes a body-less POST creating a thread %s', async (_who, headers) => {
    const before = await threadCount();
    const answer = await raw(harness.base, 'POST', '/threads', headers());
    expect(answer.status).toBe(200);
    expect(await threadCount()).toBe(before + 1);
  });

  it('refuses the same host at another port or scheme: an origin is all three', async () => {
    const { port } = new URL(harness.base);
    for (const origin of [
      `http://127.0.0.1:${Number(port) + 1}`,
      `https://127.0.0.1:${port}`,
      'http://127.0.0.1',
    ])
      expect({ origin, status: (await raw(harness.base, 'POST', '/threads', { origin })).status }).toEqual({
        origin,
        status: 403,
      });
  });

  it.each(['DELETE', 'PATCH', 'POST'])(
    'gives a foreign origin preflight for %s no allow headers, so the browser never sends it',
    async (method) => {
      const answer = await raw(harness.base, 'OPTIONS', `/threads/${threadIds[0]}`, {
        origin: evilOrigin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type',
      });
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      expect(answer.headers['access-control-allow-methods']).toBeUndefined();
      expect(answer.headers['access-control-allow-headers']).toBeUndefined();
    },
  );

  it.each([
    ['a JSON cleanup', 'POST', '/threads/cleanup', wipeEverything],
    ['a delete', 'DELETE', () => `/threads/${threadIds[2]}`, undefined],
    ['a read', 'GET', () => `/threads/${threadIds[2]}/state`, undefined],
  ] as const)(
    'answers %s under a rebound name (Host: evil.example:8080) 421 before anything runs',
    async (_what, method, path, body) => {
      const answer = await raw(
        harness.base,
        method,
        typeof path === 'string' ? path : path(),
        {
          host: 'evil.example:8080',
          origin: 'http://evil.example:8080',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body,
      );
      expect(answer.status).toBe(421);
      expect(answer.body).toMatchObject({
        error: { type: 'invalid_request_error', code: 'host_not_allowed' },
      });
      expect(answer.body.error?.message).toContain('KEEL_API_ALLOWED_HOSTS');
      expect(JSON.stringify(answer.body)).not.toContain(threadIds[2]);
      await expectIntact();
    },
  );

  it.each(['localhost:8080', '127.0.0.1', '[::1]:1234', 'LOCALHOST.', '192.168.1.20:8080'])(
    'serves the Host %s: a loopback name at any port, or an address (no name to rebind)',
    async (host) => {
      expect((await raw(harness.base, 'GET', '/ok', { host })).status).toBe(200);
    },
  );

  describe('beyond loopback, where tokens are required', () => {
    const token = 'alice-0123456789abcdef';
    const exposed = apiBeside(harness, (config) => ({
      ...config,
      api: { ...config.api, tokens: [{ owner: 'alice', token }] },
    }));

    it.each(['0.0.0.0', '::', '192.168.1.20', 'keel.example'])(
      'refuses to listen on %s without KEEL_API_TOKENS',
      (host) => {
        expect(() => parseConfig({ KEEL_API_HOST: host }, '/')).toThrow(/set KEEL_API_TOKENS/);
      },
    );

    it('answers a caller without a token 401 for a JSON cleanup, a delete and a read, a page 403 for its writes, and nothing changes', async () => {
      // A page cannot add a token header without a preflight, which gives it nothing (0312).
      for (const [method, path, body] of [
        ['POST', '/threads/cleanup', wipeEverything],
        ['DELETE', `/threads/${threadIds[0]}`, undefined],
        ['GET', `/threads/${threadIds[0]}/state`, undefined],
        ['POST', '/threads/search', '{}'],
      ] as const) {
        const typed = body === undefined ? {} : { 'content-type': 'application/json' };
        for (const origin of [undefined, evilOrigin]) {
          const answer = await raw(
            exposed.url,
            method,
            path,
            { ...(origin === undefined ? {} : { origin }), ...typed },
            body,
          );
          const refusedAs =
            origin !== undefined && method !== 'GET'
              ? { status: 403, code: 'origin_not_allowed' }
              : { status: 401, code: 'unauthenticated' };
          expect({ path, origin, status: answer.status, code: answer.body.error?.code }).toEqual({
            path,
            origin,
            ...refusedAs,
          });
        }
      }
      await expectIntact();
    });
  });

  describe('with an origin listed in KEEL_API_CORS_ORIGINS', () => {
    const chatApp = 'http://localhost:3000';
    const listing = apiBeside(harness, (config) => ({
      ...config,
      api: { ...config.api, corsOrigins: [chatApp] },
    }));

    it('takes its writes, and still refuses any other origin', async () => {
      const before = await threadCount();
      const listed = await raw(listing.url, 'POST', '/threads', { origin: chatApp });
      expect(listed.status).toBe(200);
      expect(listed.headers['access-control-allow-origin']).toBe(chatApp);
      const other = await raw(listing.url, 'POST', '/threads', { origin: 'http://localhost:3001' });
      expect(other.status).toBe(403);
      expect(await threadCount()).toBe(before + 1);
    });
  });

  describe('in a real browser, from a page on another origin', () => {
    let page: Server;
    let pageOrigin: string;
    const arrived: Array<{ method: string; path: string; status: number; origin: string | undefined }> = [];

    beforeAll(async () => {
      // What reaches the API from the page, and how it was answered.
      harness.api.server.on('request', (request, response) => {
        if (request.headers.origin !== pageOrigin && request.headers.referer?.startsWith(pageOrigin) !== true)
          return;
        response.on('finish', () =>
          arrived.push({
            method: request.method ?? '',
            path: request.url ?? '',
            status: response.statusCode,
            origin: request.headers.origin,
          }),
        );
      });
      page = createServer((_request, response) => {
        response.setHeader('content-type', 'text/html; charset=utf-8');
        response.end(hostilePage(harness.base, threadIds));
      });
      await new Promise<void>((resolve) => page.listen(0, 'localhost', resolve));
      pageOrigin = `http://localhost:${(page.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      await new Promise<void>((resolve) => page.close(() => resolve()));
    });

    it('sends no-cors fetches and submits a form, and every thread is still there and none was created', async () => {
      const before = await threadCount();
      const browser = await chromium.launch({
        executablePath: chromiumPath,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      try {
        const tab = await browser.newPage();
        await tab.goto(pageOrigin);
        const report = (
          await tab.waitForFunction(() => (globalThis as { report?: unknown }).report, undefined, {
            timeout: 30_000,
          })
        ).jsonValue() as Promise<{ readable: string[]; form: string }>;
        const { readable, form } = await report;
        // Reads that need CORS failed: the page learned nothing.
        expect(readable).toEqual([]);
        expect(form).toBe('submitted');
      } finally {
        await browser.close();
      }
      // The attack reached the API and was refused there (so this test can fail).
      const cleanups = arrived.filter(({ path }) => path === '/threads/cleanup');
      expect(cleanups.length).toBeGreaterThanOrEqual(5);
      // Chromium said where each came from, the form included: refused by origin (0317).
      expect(new Set(cleanups.map(({ status, origin }) => [status, origin].join(' ')))).toEqual(
        new Set([`403 ${pageOrigin}`]),
      );
      // The body-less POST needs no preflight and passes the JSON-only door; its origin does not.
      expect(arrived.filter(({ method, path }) => method === 'POST' && path === '/threads')).toEqual([
        { method: 'POST', path: '/threads', status: 403, origin: pageOrigin },
      ]);
      expect(await threadCount()).toBe(before);
      // A DELETE needs a preflight, which gave this origin nothing: the browser never sent it.
      expect(arrived.filter(({ method }) => method === 'DELETE')).toEqual([]);
      await expectIntact();
    });
  });
});

/**
 * The hostile page: four no-cors fetches of the wipe (text/plain, untyped, form, multipart), a
 * body-less no-cors POST creating a thread, a `<form enctype="text/plain">` whose field spells
 * the same JSON, and reads that need CORS.
 */
function hostilePage(api: string, threadIds: string[]): string {
  const script = `
  const api = ${JSON.stringify(api)};
  const wipe = ${JSON.stringify(wipeEverything)};
  const readable = [];
  (async () => {
    const blind = (body) => fetch(api + '/threads/cleanup', { method: 'POST', mode: 'no-cors', body });
    const form = new FormData(); form.append(wipe, '');
    await Promise.allSettled([
      blind(wipe),
      blind(new Blob([wipe])),
      blind(new URLSearchParams({ [wipe]: '' })),
      blind(form),
      fetch(api + '/threads', { method: 'POST', mode: 'no-cors' }),
    ]);
    for (const [method, path, body] of [
      ['POST', '/threads/search', '{}'],
      ['DELETE', '/threads/${threadIds[0]}', undefined],
      ['GET', '/threads/${threadIds[1]}', undefined],
    ]) {
      try {
        const answer = await fetch(api + path, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
        readable.push(method + ' ' + path + ' ' + (await answer.text()).slice(0, 80));
      } catch {}
    }
    const frame = document.querySelector('iframe');
    const submitted = new Promise((resolve) => frame.addEventListener('load', () => resolve('submitted')));
    document.querySelector('form').submit();
    window.report = { readable, form: await submitted };
  })();`;
  // The field name and value join as name=value: {"older_than_days":0,"dry_run":false,"x":"="}.
  const name = wipeEverything.replace(/}$/, ',"x":"');
  return `<!doctype html><html><body>
  <iframe name="sink"></iframe>
  <form method="POST" action="${api}/threads/cleanup" enctype="text/plain" target="sink">
    <input name='${name}' value='"}'>
  </form>
  <script>${script}</script></body></html>`;
}
