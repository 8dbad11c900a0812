/**
 * `npm start` as a user meets it: the supervisor, a dev server with its SQLite file, a worker and
 * the API as real processes; a worker killed and restarted; Ctrl-C; a restart that keeps everything.
 */
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { LangChainMessage } from '../../api/protocol/langchain-messages';
import { sandboxWorkspace } from '../../activities/tools/sandbox';
import { call, freePort, userInput } from '../helpers/api';
import {
  accepts,
  bannerOf,
  keelUp as keelUpWith,
  type KeelUp as Up,
  portsNamedIn,
  waitForOutput,
} from '../helpers/keel-up';
import { scrape } from '../helpers/prometheus';
import { eventually } from '../helpers/temporal';
import { descendants, isAlive, programs } from '../helpers/process-tree';

const keelUp = (env: Record<string, string>): Up => keelUpWith([], env);

jest.setTimeout(240_000);

describe('keel up (npm start)', () => {
  it('starts everything, answers, survives a worker crash, stops on Ctrl-C and keeps the conversation', async () => {
    const [temporalPort, uiPort, apiPort, metricsPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-up-'));
    const env = {
      TEMPORAL_CLI_PATH: process.env.KEEL_TEST_CLI_PATH!,
      KEEL_TEMPORAL_PORT: String(temporalPort),
      KEEL_TEMPORAL_UI_PORT: String(uiPort),
      KEEL_API_PORT: String(apiPort),
      KEEL_WORKER_METRICS_PORT: String(metricsPort),
      KEEL_DATA_DIR: dataDir,
      // A dev server that stops answering is started again after this long (decision 0417).
      KEEL_TEMPORAL_STALL_S: '6',
    };
    const api = `http://127.0.0.1:${apiPort}`;

    const first = keelUp(env);
    await waitForOutput(first, 'Keel is running.', 120_000);
    // `keel up` holds nothing but its watchdogs: the runner its sandbox probe used has ended, so
    // nothing of it can outlive a Ctrl-C by the moment the runner takes to see `keel up` gone.
    expect(
      descendants(first.process.pid!).filter(
        (row) => row.parent === first.process.pid && !row.args.includes('watchdog.cjs'),
      ),
    ).toEqual([]);
    expect(first.output()).toContain(`API       ${api}`);
    expect(first.output()).toContain(`Web UI    http://127.0.0.1:${uiPort}`);
    expect(first.output()).toMatch(/scripted:demo — the offline scripted model.*ANTHROPIC_API_KEY/);
    expect(first.output()).toContain('Sandbox   bubblewrap, network off');
    expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).toBe(200);
    // The web chat is served by the API, at the address the banner names.
    expect(first.output()).toContain(`Chat      ${api}/`);
    const page = await fetch(`${api}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root"></div>');
    // Encrypted with a key generated once into the data dir; the Web UI decrypts through the API.
    expect(first.output()).toContain(`(decrypts through ${api}/codec)`);
    expect(first.output()).toMatch(/Encrypted with key "k\d{8}" \(from .*encryption-keys\)/);
    const keyFile = path.join(dataDir, 'encryption-keys');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const key = await readFile(keyFile, 'utf8');
    const settings = await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).text();
    expect(settings).toContain(`${api}/codec`);

    expect((await call(api, 'POST', '/threads', { thread_id: 'e2e' })).status).toBe(200);
    const answer = await call<{ messages: LangChainMessage[] }>(
      api,
      'POST',
      '/threads/e2e/runs/wait',
      userInput('run: echo "from the workspace: $(pwd)" | tee where.txt'),
    );
    // The command sees the workspace at the sandbox's fixed path; it is the thread's on the host.
    expect(JSON.stringify(answer.body.messages.at(-1))).toContain(`from the workspace: ${sandboxWorkspace}`);
    expect(await readFile(`${dataDir}/workspaces/e2e/where.txt`, 'utf8')).toBe(
      `from the workspace: ${sandboxWorkspace}\n`,
    );

    // Metrics are on by default: the worker's endpoint is in the banner, with the run, its tokens,
    // cost and tool on it; every port the banner names listens.
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    expect(first.output()).toContain(`Metrics   ${metricsUrl}`);
    // The run is counted when the workflow task that ends it completes, a moment after the answer.
    const scraped = await eventually(async () => {
      const each = await scrape(metricsUrl);
      return each.value('keel_runs_total', { status: 'completed' }) >= 1 ? each : undefined;
    });
    expect(scraped.value('keel_model_tokens_total')).toBeGreaterThan(0);
    expect(scraped.value('keel_tool_calls_total', { tool: 'bash', outcome: 'ok' })).toBe(1);
    expect(await (await fetch(metricsUrl)).text()).toContain('# TYPE keel_model_cost_usd_total counter');
    const named = portsNamedIn(bannerOf(first, 'Keel is running.'));
    expect(named).toEqual(expect.arrayContaining([apiPort, temporalPort, uiPort, metricsPort]));
    const silent: number[] = [];
    for (const port of named) if (!(await accepts(port))) silent.push(port);
    expect(silent).toEqual([]);

    // A worker that dies is restarted by the supervisor.
    const [worker] = programs(first.process.pid!)
      .filter((row) => row.args.includes('keel.ts worker'))
      .map((row) => row.pid);
    process.kill(worker!, 'SIGKILL');
    await waitForOutput(first, 'worker stopped unexpectedly', 10_000);
    const afterCrash = await call<{ messages: LangChainMessage[] }>(
      api,
      'POST',
      '/threads/e2e/runs/wait',
      userInput('run: echo second'),
    );
    expect(JSON.stringify(afterCrash.body.messages.at(-1))).toContain('second');

    // The dev server is kept serving too, on the same data: when it dies, and when it lives but
    // stops answering (SIGSTOP here; CI saw its SQLite connection wedge for good).
    const temporal = (): number =>
      programs(first.process.pid!).find((row) => row.args.includes('server start-dev'))!.pid;
    const answersAfter = async (text: string): Promise<void> => {
      const run = await call<{ messages: LangChainMessage[] }>(
        api,
        'POST',
        '/threads/kept/runs/wait',
        userInput(`run: echo ${text}`),
      );
      expect(JSON.stringify(run.body.messages.at(-1))).toContain(text);
    };
    expect((await call(api, 'POST', '/threads', { thread_id: 'kept' })).status).toBe(200);
    let mark = first.output().length;
    process.kill(temporal(), 'SIGKILL');
    await waitForOutput(first, 'the Temporal dev server stopped unexpectedly (', 30_000, mark);
    await waitForOutput(first, 'the Temporal dev server is serving again', 60_000, mark);
    await answersAfter('after-temporal-died');
    mark = first.output().length;
    const frozen = temporal();
    process.kill(frozen, 'SIGSTOP');
    await waitForOutput(first, 'the Temporal dev server has not answered for', 30_000, mark);
    await waitForOutput(first, 'the Temporal dev server is serving again', 60_000, mark);
    expect(isAlive(frozen)).toBe(false);
    await answersAfter('after-temporal-froze');

    const started = descendants(first.process.pid!);
    first.process.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('Keel stopped.');
    expect(started.filter((row) => isAlive(row.pid))).toEqual([]);

    const second = keelUp(env);
    await waitForOutput(second, 'Keel is running.', 120_000);
    // The same key, so the thread written before reads back.
    expect(await readFile(keyFile, 'utf8')).toBe(key);
    const thread = await call(api, 'GET', '/threads/e2e');
    expect(thread.body).toMatchObject({ thread_id: 'e2e', messages_count: 8, summary: { runs: 2 } });
    const continued = await call<{ messages: LangChainMessage[] }>(
      api,
      'POST',
      '/threads/e2e/runs/wait',
      userInput('and now?'),
    );
    expect(continued.body.messages).toHaveLength(10);
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses to start, saying what to do, when the API port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const up = keelUp({
        TEMPORAL_CLI_PATH: process.env.KEEL_TEST_CLI_PATH!,
        KEEL_API_PORT: String(port),
        KEEL_WORKER_METRICS_PORT: 'off',
        KEEL_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'keel-up-')),
      });
      expect(await up.exited).toBe(1);
      expect(up.output()).toContain(
        `keel up failed: the API's port ${port} on 127.0.0.1 is in use: stop what listens there (another \`npm start\`?), or set KEEL_API_PORT to another port.`,
      );
      expect(up.output()).not.toContain('Starting the Temporal dev server');
    } finally {
      taken.close();
    }
  });
});
