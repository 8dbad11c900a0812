/**
 * Traces and metrics, end to end, in real backends: a `keel api` and a `keel worker` process
 * export spans over OTLP to a real OpenTelemetry Collector (which writes them to a file the test
 * reads), and serve Prometheus metrics the test scrapes and parses. The model is the fake
 * Anthropic server, so a failed attempt and a worker killed mid-call can be staged.
 */
import { randomUUID } from 'node:crypto';
import type { KeelConfig } from '../../platform/config';
import { startFakeAnthropic, toolUsingResponder, type FakeAnthropic } from '../fakes/anthropic-server';
import { call, freePort, userInput, waitRun } from '../helpers/api';
import { startCollector, type Collector, type StoredSpan } from '../helpers/otel-collector';
import { scrape } from '../helpers/prometheus';
import { eventually, testConfig } from '../helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

jest.setTimeout(180_000);

const model = 'claude-sonnet-4-5';

interface RunView {
  run_id: string;
  status: string;
}

/** The span's ancestors, nearest first, as far as the collector has them. */
function ancestors(span: StoredSpan, spans: StoredSpan[]): StoredSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain: StoredSpan[] = [];
  let parent = byId.get(span.parentSpanId);
  while (parent !== undefined) {
    chain.push(parent);
    parent = byId.get(parent.parentSpanId);
  }
  return chain;
}

/** The trace as a tree of names, for a failure message. */
function describeTrace(spans: StoredSpan[]): string {
  const children = (id: string): StoredSpan[] => spans.filter((span) => span.parentSpanId === id);
  const ids = new Set(spans.map((span) => span.spanId));
  const lines: string[] = [];
  const walk = (span: StoredSpan, depth: number): void => {
    lines.push(`${'  '.repeat(depth)}${span.name} [${span.service}]`);
    for (const child of children(span.spanId)) walk(child, depth + 1);
  };
  for (const root of spans.filter((span) => !ids.has(span.parentSpanId))) walk(root, 0);
  return lines.join('\n');
}

describe('traces and metrics in real backends', () => {
  let collector: Collector;
  let fake: FakeAnthropic;
  let config: KeelConfig;
  let worker: WorkerProcess;
  let api: WorkerProcess;
  let base: string;
  let workerMetrics: string;
  const processes: WorkerProcess[] = [];

  const telemetryEnv = (): Record<string, string> => ({
    KEEL_TASK_QUEUE: config.taskQueue,
    KEEL_DATA_DIR: config.dataDir,
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    KEEL_MODEL: `anthropic:${model}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
  });

  const startWorker = async (
    extra: Record<string, string> = {},
  ): Promise<{ process: WorkerProcess; metrics: string }> => {
    const port = await freePort();
    const started = await startWorkerProcess({
      env: { ...telemetryEnv(), KEEL_WORKER_METRICS_PORT: String(port), ...extra },
    });
    processes.push(started);
    return { process: started, metrics: `http://127.0.0.1:${port}/metrics` };
  };

  /** Sends one run and waits for it to end; its id. */
  const runTurn = async (text: string): Promise<string> => {
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {});
    const threadId = thread.body.thread_id;
    const waited = await call(base, 'POST', `/threads/${threadId}/runs/wait?timeout_s=120`, userInput(text));
    expect(waited.status).toBe(200);
    const runs = await call<RunView[]>(base, 'GET', `/threads/${threadId}/runs`);
    expect(runs.body).toHaveLength(1);
    expect(runs.body[0]!.status).toBe('completed');
    return runs.body[0]!.run_id;
  };

  /** Every stored span of the run's trace, once the spans named `needed` have all arrived. */
  const traceOf = (runId: string, needed: (spans: StoredSpan[]) => boolean): Promise<StoredSpan[]> =>
    eventually(
      async () => {
        const spans = await collector.spans();
        const ofRun = spans.filter((span) => span.attributes['keel.run_id'] === runId);
        const traceIds = new Set(ofRun.map((span) => span.traceId));
        if (traceIds.size !== 1) return undefined;
        const trace = spans.filter((span) => traceIds.has(span.traceId));
        return needed(trace) ? trace : undefined;
      },
      60_000,
      `the spans of run ${runId}`,
    );

  beforeAll(async () => {
    // The first run builds the collector (minutes); later runs find it in the cache.
    collector = await startCollector();
    fake = await startFakeAnthropic({ responder: toolUsingResponder });
    config = await testConfig();
    ({ process: worker, metrics: workerMetrics } = await startWorker());
    const apiPort = await freePort();
    api = await startWorkerProcess({
      command: 'api',
      env: { ...telemetryEnv(), KEEL_API_PORT: String(apiPort) },
    });
    processes.push(api);
    base = `http://127.0.0.1:${apiPort}`;
  }, 20 * 60_000);

  afterAll(async () => {
    for (const each of processes) each.kill('SIGKILL');
    await Promise.all(processes.map((each) => each.exited));
    await fake?.close();
    await collector?.stop();
  });

  it('traces a tool turn as one trace: API request → workflow → model call and tool call, with GenAI attributes', async () => {
    const runId = await runTurn('run: echo traced');
    const spans = await traceOf(
      runId,
      (trace) =>
        trace.filter((span) => span.name === `chat ${model}`).length === 2 &&
        trace.some((span) => span.name === 'execute_tool bash') &&
        trace.some((span) => span.service === 'keel-api' && span.parentSpanId === ''),
    );
    const tree = describeTrace(spans);
    const root = spans.find((span) => span.parentSpanId === '')!;
    expect({ root: root.name, service: root.service }).toEqual({
      root: 'POST /threads/:thread_id/runs/wait',
      service: 'keel-api',
    });
    const [first, second] = spans
      .filter((span) => span.name === `chat ${model}`)
      .sort((a, b) => Number(a.attributes['keel.step']) - Number(b.attributes['keel.step']));
    const tool = spans.find((span) => span.name === 'execute_tool bash')!;
    for (const span of [first!, second!, tool]) {
      const chain = ancestors(span, spans);
      // Every span reaches the API request; nothing hangs off a span the collector never got.
      expect({ tree, top: chain.at(-1)?.spanId }).toEqual({ tree, top: root.spanId });
      expect(span.service).toBe('keel-worker');
    }
    const names = (span: StoredSpan): string[] => ancestors(span, spans).map((each) => each.name);
    expect(names(first!).slice(0, 2)).toEqual(['RunActivity:callModel', 'StartActivity:callModel']);
    expect(names(tool).slice(0, 2)).toEqual(['RunActivity:runTool', 'StartActivity:runTool']);
    // The input reached the thread by update, or by the signal the door sends when the update is slow.
    expect(
      names(first!).filter((name) =>
        ['StartWorkflowUpdate:submitInput', 'SignalWorkflow:userMessage'].includes(name),
      ),
    ).toHaveLength(1);
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': model,
      'gen_ai.response.finish_reasons': ['tool_use'],
      'keel.step': 1,
    });
    expect(second!.attributes['gen_ai.response.finish_reasons']).toEqual(['end_turn']);
    for (const span of [first!, second!]) {
      expect(span.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(span.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      // Prompts and completions stay out unless the operator opts in.
      expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(span.attributes['gen_ai.output.messages']).toBeUndefined();
    }
    expect(tool.attributes).toMatchObject({
      'gen_ai.tool.name': 'bash',
      'gen_ai.operation.name': 'execute_tool',
    });
  });

  it("puts a workflow's ids on its spans, never the thread's memo, metadata or messages", async () => {
    const secret = `plover-${randomUUID()}`;
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {
      metadata: { title: `about ${secret}` },
    });
    const threadId = thread.body.thread_id;
    const waited = await waitRun(base, threadId, userInput(`run: echo ${secret}`), 'timeout_s=120');
    expect(waited.status).toBe(200);
    const runs = await call<RunView[]>(base, 'GET', `/threads/${threadId}/runs`);
    const spans = await traceOf(runs.body[0]!.run_id, (trace) =>
      trace.some((span) => span.name === 'execute_tool bash'),
    );
    // The spans the workflow made, exported through the worker's sink with the workflow's info.
    const fromWorkflow = spans.filter((span) => typeof span.attributes.workflowId === 'string');
    expect(fromWorkflow.length).toBeGreaterThan(0);
    for (const span of fromWorkflow) {
      expect(span.attributes).toMatchObject({
        workflowId: expect.stringContaining(threadId),
        runId: expect.any(String),
        workflowType: expect.any(String),
      });
      for (const field of ['memo', 'searchAttributes', 'typedSearchAttributes', 'lastResult'])
        expect(span.attributes).not.toHaveProperty(field);
    }
    // Nowhere in any span so far, of any trace: not the title, not the first message.
    expect(JSON.stringify(await collector.spans())).not.toContain(secret);
  });

  it('serves Prometheus metrics on the API and the worker that move with a tool turn', async () => {
    const apiBefore = await scrape(`${base}/metrics`);
    const workerBefore = await scrape(workerMetrics);
    await runTurn('run: echo counted');
    // The worker's run counter moves when the workflow task that ends the run completes.
    const workerAfter = await eventually(async () => {
      const scraped = await scrape(workerMetrics);
      return scraped.value('keel_runs_total', { status: 'completed' }) >
        workerBefore.value('keel_runs_total', { status: 'completed' })
        ? scraped
        : undefined;
    });
    const apiAfter = await scrape(`${base}/metrics`);
    expect(apiAfter.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(workerAfter.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const moved = (before: typeof apiBefore, after: typeof apiBefore, name: string, labels = {}): number =>
      after.value(name, labels) - before.value(name, labels);
    const waitRoute = { method: 'POST', route: '/threads/:thread_id/runs/wait', status: '200' };
    expect(moved(apiBefore, apiAfter, 'keel_http_requests_total', waitRoute)).toBe(1);
    expect(
      moved(apiBefore, apiAfter, 'keel_http_request_duration_seconds_count', { route: waitRoute.route }),
    ).toBe(1);
    const calls = { provider: 'anthropic', model, outcome: 'ok' };
    expect(moved(workerBefore, workerAfter, 'keel_model_calls_total', calls)).toBe(2);
    expect(moved(workerBefore, workerAfter, 'keel_tool_calls_total', { tool: 'bash', outcome: 'ok' })).toBe(
      1,
    );
    expect(
      moved(workerBefore, workerAfter, 'keel_model_tokens_total', { model, kind: 'input' }),
    ).toBeGreaterThan(0);
    expect(
      moved(workerBefore, workerAfter, 'keel_model_tokens_total', { model, kind: 'output' }),
    ).toBeGreaterThan(0);
    expect(moved(workerBefore, workerAfter, 'keel_model_cost_usd_total', { model })).toBeGreaterThan(0);
    expect(moved(workerBefore, workerAfter, 'keel_model_time_to_first_token_seconds_count')).toBe(2);
    expect(moved(workerBefore, workerAfter, 'keel_run_duration_seconds_count', { status: 'completed' })).toBe(
      1,
    );
    // Temporal's own worker metrics, relayed from the SDK's runtime on the same endpoint.
    expect([...workerAfter.names()].some((name) => name.startsWith('temporal_'))).toBe(true);
    // Labels stay bounded: no thread or run ids anywhere.
    for (const sample of [...apiAfter.samples, ...workerAfter.samples])
      expect(Object.keys(sample.labels)).not.toEqual(expect.arrayContaining(['thread_id']));
    const keelSamples = [...apiAfter.samples, ...workerAfter.samples].filter((sample) =>
      sample.name.startsWith('keel_'),
    );
    expect(keelSamples.length).toBeGreaterThan(0);
    expect(JSON.stringify(keelSamples)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('counts how long an approval waited and the event streams open while it waits', async () => {
    const apiBefore = await scrape(`${base}/metrics`);
    const workerBefore = await scrape(workerMetrics);
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {
      config: { approval: 'require' },
    });
    const threadId = thread.body.thread_id;
    const run = await call<{ run_id: string }>(
      base,
      'POST',
      `/threads/${threadId}/runs`,
      userInput('run: echo approved'),
    );
    const pending = await eventually(async () => {
      const listed = await call<Array<{ approval_id: string }>>(
        base,
        'GET',
        `/threads/${threadId}/approvals`,
      );
      return listed.body.length === 1 ? listed.body[0]! : undefined;
    });
    const controller = new AbortController();
    const stream = await fetch(`${base}/threads/${threadId}/runs/${run.body.run_id}/stream`, {
      signal: controller.signal,
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reading = stream.text().catch(() => '');
    const streams = (scraped: Awaited<ReturnType<typeof scrape>>): number =>
      scraped.value('keel_stream_clients', { style: 'langgraph' });
    await eventually(async () =>
      streams(await scrape(`${base}/metrics`)) === streams(apiBefore) + 1 ? true : undefined,
    );
    // A wait the histogram can tell from nothing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const decided = await call(base, 'POST', `/threads/${threadId}/approvals/${pending.approval_id}`, {
      decision: 'approve',
    });
    expect(decided.status).toBe(200);
    const joined = await call(base, 'GET', `/threads/${threadId}/runs/${run.body.run_id}/join?timeout_s=60`);
    expect(joined.status).toBe(200);
    controller.abort();
    await reading;
    await eventually(async () =>
      streams(await scrape(`${base}/metrics`)) === streams(apiBefore) ? true : undefined,
    );
    const workerAfter = await eventually(async () => {
      const scraped = await scrape(workerMetrics);
      return scraped.value('keel_approval_wait_seconds_count', { decision: 'approve' }) >
        workerBefore.value('keel_approval_wait_seconds_count', { decision: 'approve' })
        ? scraped
        : undefined;
    });
    const waited =
      workerAfter.value('keel_approval_wait_seconds_sum', { decision: 'approve' }) -
      workerBefore.value('keel_approval_wait_seconds_sum', { decision: 'approve' });
    expect(waited).toBeGreaterThanOrEqual(0.3);
    expect(waited).toBeLessThan(120);
  });

  it('shows a retried model call as a span of its own in the same trace, and counts the error', async () => {
    const before = await scrape(workerMetrics);
    fake.enqueue({ kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' });
    const runId = await runTurn('hello after a failure');
    const spans = await traceOf(
      runId,
      (trace) => trace.filter((span) => span.name === `chat ${model}`).length === 2,
    );
    const attempts = spans
      .filter((span) => span.name === `chat ${model}`)
      .sort((a, b) => Number(a.attributes['keel.attempt']) - Number(b.attributes['keel.attempt']));
    expect(attempts.map((span) => span.attributes['keel.attempt'])).toEqual([1, 2]);
    expect(attempts[0]!.status).toMatch(/ERROR|2/);
    expect(typeof attempts[0]!.attributes['error.type']).toBe('string');
    expect(attempts[1]!.attributes['gen_ai.response.finish_reasons']).toEqual(['end_turn']);
    // Each attempt runs under its own RunActivity span, both under the one StartActivity.
    const [failed, retried] = attempts.map((span) => ancestors(span, spans));
    expect(failed![0]!.spanId).not.toBe(retried![0]!.spanId);
    expect(failed![1]!.spanId).toBe(retried![1]!.spanId);
    const after = await scrape(workerMetrics);
    const errorType = String(attempts[0]!.attributes['error.type']);
    expect(after.value('keel_model_errors_total', { provider: 'anthropic', error_type: errorType })).toBe(
      before.value('keel_model_errors_total', { provider: 'anthropic', error_type: errorType }) + 1,
    );
    expect(after.value('keel_model_call_retries_total', { provider: 'anthropic' })).toBe(
      before.value('keel_model_call_retries_total', { provider: 'anthropic' }) + 1,
    );
  });

  it('puts prompts and completions on model spans only for a worker whose operator opted in', async () => {
    worker.kill('SIGTERM');
    await worker.exited;
    ({ process: worker, metrics: workerMetrics } = await startWorker({
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    }));
    const runId = await runTurn('say the secret word: plover');
    const spans = await traceOf(runId, (trace) => trace.some((span) => span.name === `chat ${model}`));
    const chat = spans.find((span) => span.name === `chat ${model}`)!;
    expect(String(chat.attributes['gen_ai.input.messages'])).toContain('say the secret word: plover');
    expect(String(chat.attributes['gen_ai.output.messages'])).toContain(
      'You said: say the secret word: plover',
    );
  });

  it('keeps one trace across a worker killed mid-model-call: the retry on another worker joins it', async () => {
    fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'a slow answer that never arrives '.repeat(20) }],
      tokenDelayMs: 200,
    });
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {});
    const threadId = thread.body.thread_id;
    const requests = fake.requests.length;
    const waiting = waitRun(base, threadId, userInput('survive this'), 'timeout_s=150');
    await fake.waitForRequests(requests + 1, 30_000);
    // The only worker has the call; a new one retries it once the heartbeat timeout passes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    worker.kill('SIGKILL');
    await worker.exited;
    ({ process: worker, metrics: workerMetrics } = await startWorker());
    expect((await waiting).status).toBe(200);
    const runs = await call<RunView[]>(base, 'GET', `/threads/${threadId}/runs`);
    const runId = runs.body[0]!.run_id;
    expect(runs.body[0]!.status).toBe('completed');
    // The cut call's span never ended on the killed worker, so every model span stored is the
    // retry's: the same activity's second attempt, on the new worker.
    const spans = await traceOf(
      runId,
      (trace) =>
        trace.some((span) => span.name === `chat ${model}`) &&
        trace.some((span) => span.service === 'keel-api' && span.parentSpanId === ''),
    );
    const retried = spans.find((span) => span.name === `chat ${model}`)!;
    const root = spans.find((span) => span.parentSpanId === '')!;
    expect(root.name).toBe('POST /threads/:thread_id/runs/wait');
    expect(retried.attributes['keel.attempt']).toBeGreaterThanOrEqual(2);
    expect(ancestors(retried, spans).at(-1)?.spanId).toBe(root.spanId);
    // Its parent is the one scheduling span, which the new worker's replay ended under the id the
    // killed worker gave it: nothing live-only (an update's validator, a query) drew from the
    // workflow's seeded randomness in between (decision 0255). The input came by update, or by the
    // signal the door sends when the update is slow.
    const [run, scheduled, handled] = ancestors(retried, spans).map((span) => span.name);
    expect([run, scheduled]).toEqual(['RunActivity:callModel', 'StartActivity:callModel']);
    expect(['HandleUpdate:submitInput', 'HandleSignal:userMessage']).toContain(handled);
  });
});
