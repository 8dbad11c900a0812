/**
 * A prompt Stop without one-second heartbeats (issue 30, decision 0420). On the live channel a
 * model call beats at 80 % of its heartbeat timeout (8 s), and the API that takes a Stop asks the
 * call's worker to beat at once: the beat's answer carries the cancel. The worker beats only for
 * the API's token and only for calls it runs; a request that cannot reach it leaves the Stop to
 * the slow beat, late but never lost. The history channel keeps its one-second beat.
 */
import type { Client } from '@temporalio/client';
import { loadEncryptionKeys } from '../../codec/keys';
import { LiveTextKeys } from '../../codec/live-text-token';
import { planFromText } from '../../activities/model/scripted';
import type { Run } from '../../common/run';
import { workflowIdFor } from '../../common/thread';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { apiHarness, call, freePort, userInput, type ApiHarness } from '../helpers/api';
import { longQuestion, streamLongAnswer } from '../helpers/long-answer';
import { eventually } from '../helpers/temporal';

jest.setTimeout(120_000);

interface AiView {
  type: string;
  content: string;
  response_metadata: Record<string, unknown>;
}

const anthropicModel = 'anthropic:claude-sonnet-4-6';
const slowWord = 'word ';
/** 200 words 100 ms apart: twenty seconds, longer than the slow beat's eight. */
const slowAnswer = slowWord.repeat(200);

/** The pending model call as Temporal describes it: when it last beat, and whether it is still pending. */
async function modelCall(client: Client, workflowId: string) {
  const described = await client.workflowService.describeWorkflowExecution({
    namespace: client.options.namespace,
    execution: { workflowId },
  });
  const pending = described.pendingActivities?.find(
    (activity) => activity.activityType?.name === 'callModel',
  );
  return pending === undefined || pending === null
    ? undefined
    : { lastHeartbeat: pending.lastHeartbeatTime ?? undefined, identity: pending.lastWorkerIdentity ?? '' };
}

/** Starts a run on the fake's slow answer; resolves once the model has sent `words` of it. */
async function startSlowAnswer(harness: ApiHarness, anthropic: FakeAnthropic, words: number) {
  const thread = await call<{ thread_id: string }>(harness.base, 'POST', '/threads', {
    config: { model: anthropicModel },
  });
  const threadId = thread.body.thread_id;
  let sent = '';
  anthropic.enqueue({
    kind: 'message',
    content: [{ type: 'text', text: slowAnswer }],
    tokenDelayMs: 100,
    onSent: (piece) => (sent += piece),
  });
  const created = await call<Run>(
    harness.base,
    'POST',
    `/threads/${threadId}/runs`,
    userInput('a long answer'),
  );
  expect(created.status).toBe(200);
  await eventually(
    () => Promise.resolve(sent.length >= words * slowWord.length ? true : undefined),
    60_000,
    `${words} words from the model`,
  );
  return { threadId, runId: created.body.run_id, workflowId: workflowIdFor(threadId) };
}

/** Presses Stop (waiting for the run's end) and reads the answer it kept. */
async function stop(harness: ApiHarness, threadId: string, runId: string) {
  const pressed = Date.now();
  const cancelled = await call<Run>(
    harness.base,
    'POST',
    `/threads/${threadId}/runs/${runId}/cancel?wait=1`,
    {},
  );
  const stopMs = Date.now() - pressed;
  const state = await call<{ values: { messages: AiView[] } }>(
    harness.base,
    'GET',
    `/threads/${threadId}/state`,
  );
  const answer = state.body.values.messages.filter((message) => message.type === 'ai').at(-1);
  return { cancelled, stopMs, answer };
}

describe('a Stop on the live channel, with model calls beating slowly', () => {
  let anthropic: FakeAnthropic;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
  });
  const harness = apiHarness(() => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: anthropic.url }));
  afterAll(() => anthropic.close());

  it('ends a typewriter answer within about two seconds of the Stop and keeps the partial text', async () => {
    const { threadId, runId, streamed } = await streamLongAnswer(harness.base, 60);
    const { cancelled, stopMs, answer } = await stop(harness, threadId, runId);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_user' });
    expect(stopMs).toBeLessThan(2_500);
    // Stopped mid-answer: the call's first slow beat (8 s) would have come after the whole answer.
    expect(answer?.response_metadata).toMatchObject({ stopped: true });
    expect(answer!.content.startsWith(streamed)).toBe(true);
    expect(answer!.content.length).toBeLessThan(planFromText(longQuestion).text.length);
  });

  it("beats at once when asked with the API's token for a call it runs, and for nothing else", async () => {
    const { threadId, runId, workflowId } = await startSlowAnswer(harness, anthropic, 25);
    // Two and a half seconds into the answer, and the call has not beaten: its cadence is the slow one.
    expect(await modelCall(harness.client, workflowId)).toMatchObject({ lastHeartbeat: undefined });
    const url = harness.worker.live!.server.url;
    const keys = new LiveTextKeys(await loadEncryptionKeys(harness.config.encryption));
    const ask = (workflow: string, token: string | undefined, method = 'POST') =>
      fetch(`${url}/beat?workflow_id=${encodeURIComponent(workflow)}`, {
        method,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      }).then((response) => response.status);
    expect(await ask(workflowId, undefined)).toBe(401);
    expect(await ask(workflowId, keys.sign('conversation-another-thread'))).toBe(401);
    expect(await ask(workflowId, keys.sign(workflowId), 'GET')).toBe(405);
    // A worker asked about a call it does not run does nothing.
    expect(await ask('conversation-another-thread', keys.sign('conversation-another-thread'))).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await modelCall(harness.client, workflowId)).toMatchObject({ lastHeartbeat: undefined });

    expect(await ask(workflowId, keys.sign(workflowId))).toBe(200);
    await eventually(
      async () =>
        (await modelCall(harness.client, workflowId))?.lastHeartbeat === undefined ? undefined : true,
      3_000,
      'the asked beat to reach Temporal',
    );
    const { cancelled, stopMs } = await stop(harness, threadId, runId);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    expect(stopMs).toBeLessThan(2_500);
  });

  it('stops the model call of a thread deleted mid-answer at once, not at its next slow beat', async () => {
    const before = anthropic.requests.length;
    const { threadId } = await startSlowAnswer(harness, anthropic, 20);
    const request = anthropic.requests[before]!;
    const deleted = Date.now();
    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`)).status).toBe(200);
    await eventually(
      () => Promise.resolve(request.closedAt !== undefined ? true : undefined),
      15_000,
      'the model request to close',
    );
    // The slow beat would have come 8 s after the call began, about 6 s from here.
    expect(request.closedAt! - deleted).toBeLessThan(3_000);
  });
});

describe('a Stop whose request to the worker is lost', () => {
  let anthropic: FakeAnthropic;
  let deadPort: number;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    deadPort = await freePort();
  });
  // The worker advertises a live URL where nothing listens: the API's request for a beat fails.
  const harness = apiHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: anthropic.url,
    KEEL_WORKER_LIVE_URL: `http://127.0.0.1:${deadPort}`,
  }));
  afterAll(() => anthropic.close());

  it('still lands, by the slow beat, and keeps the partial text', async () => {
    const { threadId, runId } = await startSlowAnswer(harness, anthropic, 20);
    const { cancelled, stopMs, answer } = await stop(harness, threadId, runId);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_user' });
    // Not at once (nothing could ask the worker), and not a one-second beat either: the slow beat,
    // 8 s after the call began, about 2 s of which had passed at the Stop.
    expect(stopMs).toBeGreaterThan(3_000);
    expect(stopMs).toBeLessThan(12_000);
    expect(answer?.response_metadata).toMatchObject({ stopped: true });
    expect(answer!.content.startsWith(slowWord.repeat(20))).toBe(true);
    expect(answer!.content.length).toBeLessThan(slowAnswer.length);
  });
});

describe('a Stop on the history channel', () => {
  let anthropic: FakeAnthropic;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
  });
  const harness = apiHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: anthropic.url,
    KEEL_TOKEN_CHANNEL: 'history',
  }));
  afterAll(() => anthropic.close());

  it('reaches the model call by its one-second beat', async () => {
    const { threadId, runId, workflowId } = await startSlowAnswer(harness, anthropic, 25);
    expect((await modelCall(harness.client, workflowId))?.lastHeartbeat).toBeDefined();
    const { cancelled, stopMs, answer } = await stop(harness, threadId, runId);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    expect(stopMs).toBeLessThan(2_500);
    expect(answer?.response_metadata).toMatchObject({ stopped: true });
  });
});
