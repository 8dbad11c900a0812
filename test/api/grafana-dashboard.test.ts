/**
 * The Grafana dashboard Keel ships (`telemetry/grafana/keel-dashboard.json`) reads only metrics
 * Keel exports: every query's metric names are found on a real worker's or API's `/metrics`,
 * scraped from `keel worker` and `keel api` processes after a turn with a tool.
 */
import { call, freePort, userInput, waitRun } from '../helpers/api';
import { dashboardQueries, exportedByAll, unexportedQueries } from '../helpers/dashboard';
import { metricNames } from '../helpers/promql';
import { testConfig } from '../helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

jest.setTimeout(180_000);

describe('the Grafana dashboard', () => {
  const processes: WorkerProcess[] = [];
  let exported: Set<string>;

  beforeAll(async () => {
    const config = await testConfig();
    const [metricsPort, apiPort] = [await freePort(), await freePort()];
    const env = {
      KEEL_TASK_QUEUE: config.taskQueue,
      KEEL_DATA_DIR: config.dataDir,
      KEEL_MODEL: 'scripted:demo',
    };
    processes.push(
      await startWorkerProcess({ env: { ...env, KEEL_WORKER_METRICS_PORT: String(metricsPort) } }),
    );
    processes.push(
      await startWorkerProcess({ command: 'api', env: { ...env, KEEL_API_PORT: String(apiPort) } }),
    );
    const api = `http://127.0.0.1:${apiPort}`;
    const thread = await call<{ thread_id: string }>(api, 'POST', '/threads', {});
    const waited = await waitRun(api, thread.body.thread_id, userInput('run: echo hi'));
    expect(waited.status).toBe(200);
    const texts = await Promise.all(
      [`http://127.0.0.1:${metricsPort}/metrics`, `${api}/metrics`].map(async (url) => {
        const response = await fetch(url);
        expect(response.status).toBe(200);
        return response.text();
      }),
    );
    exported = exportedByAll(texts);
  }, 120_000);

  afterAll(async () => {
    for (const each of processes) each.kill('SIGKILL');
    await Promise.all(processes.map((each) => each.exited));
  });

  it('names in every query only metrics a worker or the API exports', async () => {
    const all = await dashboardQueries();
    expect(all.length).toBeGreaterThan(0);
    expect(await unexportedQueries(exported)).toEqual([]);
    for (const { expr } of all) expect(metricNames(expr).length).toBeGreaterThan(0);
  });

  it('shows runs, cost, tokens, time to first token, tool outcomes and approval waits', async () => {
    const used = new Set((await dashboardQueries()).flatMap(({ expr }) => metricNames(expr)));
    for (const name of [
      'keel_runs_total',
      'keel_model_cost_usd_total',
      'keel_model_tokens_total',
      'keel_model_time_to_first_token_seconds_bucket',
      'keel_tool_calls_total',
      'keel_approval_wait_seconds_bucket',
    ])
      expect(used).toContain(name);
  });

  it('would notice a query naming a metric nobody exports', () => {
    expect(exported.has('keel_runs_total')).toBe(true);
    expect(exported.has('keel_http_requests_total')).toBe(true);
    expect(metricNames('sum(rate(keel_runs_totl[5m]))').filter((name) => !exported.has(name))).toEqual([
      'keel_runs_totl',
    ]);
  });
});
