/**
 * Stop keeps what was said (issue 31, decision 0370): a run stopped while its answer streams
 * commits the text streamed so far as an answer marked stopped, seen in state, history and
 * export; the next turn's request is valid for Anthropic and OpenAI (real SDKs, fake servers that
 * refuse what the real APIs refuse); a worker that replays the history without a cache agrees.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { closeSignal } from '../../common/messages';
import type { Run } from '../../common/run';
import { workflowIdFor } from '../../common/thread';
import { loadDataConverter } from '../../codec/data-converter';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server';
import { apiHarness, call, userInput, type ApiHarness, waitRun } from '../helpers/api';
import { longQuestion, streamLongAnswer } from '../helpers/long-answer';
import { eventually, startTestWorker } from '../helpers/temporal';

jest.setTimeout(120_000);

interface AiView {
  type: string;
  content: string;
  tool_calls: unknown[];
  response_metadata: Record<string, unknown>;
}
interface StateView {
  values: { messages: AiView[] };
}

/** A long answer from the typewriter model (25 ms a token): about ten seconds of streaming. */

/** 'ok' when the thread's history replays against the current bundle, else the error. */
async function replayed(harness: ApiHarness, threadId: string): Promise<string> {
  const handle = harness.client.workflow.getHandle(workflowIdFor(threadId));
  return Worker.runReplayHistory(
    {
      workflowBundle: { codePath: process.env.KEEL_TEST_BUNDLE! },
      dataConverter: await loadDataConverter(harness.config.encryption),
    },
    await handle.fetchHistory(),
    workflowIdFor(threadId),
  ).then(
    () => 'ok',
    (error: unknown) => String(error),
  );
}

describe('Stop keeps what was said', () => {
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAI;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    openai = await startFakeOpenAI();
  });
  const harness = apiHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: anthropic.url,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: `${openai.url}/v1`,
  }));
  afterAll(() => Promise.all([anthropic.close(), openai.close()]));
  afterEach(() => {
    expect(anthropic.violations).toEqual([]);
    expect(openai.violations).toEqual([]);
  });

  /** Starts a long answer, waits until `chars` of it have streamed, and presses Stop. */
  async function stopMidStream(chars: number) {
    const { base } = harness;
    const { threadId, runId, streamed } = await streamLongAnswer(harness.base, chars);
    const pressed = Date.now();
    const cancelled = await call<Run>(base, 'POST', `/threads/${threadId}/runs/${runId}/cancel`, {
      reason: 'stopped by the user',
    });
    return {
      threadId,
      runId,
      streamed,
      cancelled,
      stopMs: Date.now() - pressed,
    };
  }

  const lastAi = (messages: AiView[]) => messages.filter((message) => message.type === 'ai').at(-1)!;

  it('commits the partial answer, marked stopped, to state, history and export; the run ends cancelled', async () => {
    const { base } = harness;
    const { threadId, streamed, cancelled, stopMs } = await stopMidStream(60);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_user' });
    // The run ends once the call has stopped, which it learns by heartbeat (about a second).
    expect(stopMs).toBeLessThan(5_000);

    const state = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
    const answer = lastAi(state.body.values.messages);
    expect(answer.response_metadata).toMatchObject({ stopped: true });
    expect(answer.tool_calls).toEqual([]);
    // Everything the page showed is kept (and what streamed after it, up to the Stop), not all of it.
    expect(answer.content.startsWith(streamed)).toBe(true);
    expect(answer.content.length).toBeLessThan(longQuestion.length);

    const history = await call<Array<{ values: StateView['values'] }>>(
      base,
      'GET',
      `/threads/${threadId}/history`,
    );
    expect(lastAi(history.body[0]!.values.messages)).toMatchObject({
      content: answer.content,
      response_metadata: { stopped: true },
    });

    const exported = await call<{ messages: Array<Record<string, unknown>> }>(
      base,
      'GET',
      `/threads/${threadId}/export`,
    );
    expect(exported.body.messages.at(-1)).toMatchObject({
      role: 'assistant',
      stopped: true,
      content: [{ type: 'text', text: answer.content }],
    });
    const markdown = await fetch(`${base}/threads/${threadId}/export?format=markdown`).then((r) => r.text());
    expect(markdown).toContain('## Assistant (stopped)');
  });

  it.each([
    ['anthropic:claude-sonnet-4-6', () => anthropic.requests.at(-1)!.body.messages],
    ['openai:gpt-4.1', () => openai.requests.at(-1)!.body.messages],
  ])('goes on to a next turn on %s whose request holds the stopped text', async (model, lastMessages) => {
    const { base } = harness;
    const { threadId } = await stopMidStream(30);
    const next = await waitRun<{ messages: AiView[] }>(
      base,
      threadId,
      userInput('go on, please', { config: { model } }),
    );
    expect(next.status).toBe(200);
    const sent = JSON.stringify(lastMessages());
    expect(sent).toContain('every word of this sentence');
    expect(sent).toContain('go on, please');
    const after = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
    expect(after.body.values.messages.map((message) => message.type)).toEqual(['human', 'ai', 'human', 'ai']);
  });

  it('keeps the answer a new message interrupted (multitask_strategy interrupt), before the new turn', async () => {
    const { base } = harness;
    const { threadId, runId, streamed } = await streamLongAnswer(harness.base, 40);
    const next = await waitRun<{ messages: AiView[] }>(
      base,
      threadId,
      userInput('never mind, say hi', { multitask_strategy: 'interrupt' }),
    );
    expect(next.status).toBe(200);
    const interrupted = await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`);
    expect(interrupted.body).toMatchObject({ status: 'cancelled', status_reason: 'superseded' });
    const state = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
    const messages = state.body.values.messages;
    expect(messages.map((message) => message.type)).toEqual(['human', 'ai', 'human', 'ai']);
    expect(messages[1]!.response_metadata).toMatchObject({ stopped: true });
    expect(messages[1]!.content.startsWith(streamed)).toBe(true);
    expect(messages[3]!.content).toContain('never mind, say hi');
    expect(await replayed(harness, threadId)).toBe('ok');
  });

  it('keeps the answer of a thread closed while it streams, and the workflow ends once it is in', async () => {
    const { base, client } = harness;
    const { threadId, runId, streamed } = await streamLongAnswer(harness.base, 40);
    const handle = client.workflow.getHandle(workflowIdFor(threadId));
    await handle.signal(closeSignal, { reason: 'closed by its owner' });
    await handle.result();
    const closed = await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`);
    expect(closed.body).toMatchObject({ status: 'cancelled', status_reason: 'thread_closed' });
    const state = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
    const answer = lastAi(state.body.values.messages);
    expect(answer.response_metadata).toMatchObject({ stopped: true });
    expect(answer.content.startsWith(streamed)).toBe(true);
    expect(await replayed(harness, threadId)).toBe('ok');
  });

  it('replays the history of a stopped run, and a restarted worker without a cache goes on from it', async () => {
    const { base, config } = harness;
    const { threadId } = await stopMidStream(30);
    expect(await replayed(harness, threadId)).toBe('ok');

    await harness.worker.stop();
    harness.worker = await startTestWorker({ config, maxCachedWorkflows: 0 });
    const next = await call(base, 'POST', `/threads/${threadId}/runs/wait`, userInput('and now?'));
    expect(next.status).toBe(200);
    // A worker without a cache replays the whole history for each read: on a loaded machine the
    // first may outlast the API's read timeout (503), so read until it answers.
    const state = await eventually(
      async () => {
        const read = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
        return read.status === 200 ? read : undefined;
      },
      60_000,
      'the state of the thread',
    );
    const messages = state.body.values.messages;
    expect(messages.map((message) => message.type)).toEqual(['human', 'ai', 'human', 'ai']);
    expect(messages[1]!.response_metadata).toMatchObject({ stopped: true });
  });
});

describe('Stop keeps what was said by a local model call (a waited run, KEEL_LOCAL_MODEL_CALLS)', () => {
  let anthropic: FakeAnthropic;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
  });
  const harness = apiHarness(() => ({
    KEEL_LOCAL_MODEL_CALLS: '1',
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: anthropic.url,
  }));
  afterAll(() => anthropic.close());

  it('commits the text the local call had when the waited run is stopped', async () => {
    const { base } = harness;
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {
      config: { model: 'anthropic:claude-sonnet-4-6' },
    });
    const threadId = thread.body.thread_id;
    const runId = randomUUID();
    // A slow answer (about 20 s): nothing of a local call streams to a client, so the model's own
    // side says when it has sent enough to stop it.
    let sent = '';
    anthropic.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'word '.repeat(200) }],
      tokenDelayMs: 100,
      onSent: (piece) => (sent += piece),
    });
    const waited = waitRun<{ messages: AiView[] }>(
      base,
      threadId,
      userInput('a long answer, please', { run_id: runId }),
    );
    await eventually(() => Promise.resolve(sent.length >= 50 ? sent : undefined), 60_000, 'ten words');
    // A workflow task stays open while a local call runs, so the Stop may go by signal ("queued").
    const pressed = await call(base, 'POST', `/threads/${threadId}/runs/${runId}/cancel`, {});
    expect([200, 202]).toContain(pressed.status);
    await waited;
    const cancelled = await eventually(async () => {
      const run = await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`);
      return run.body.status === 'cancelled' ? run : undefined;
    });
    expect(cancelled.body).toMatchObject({ status_reason: 'cancelled_by_user' });
    const history = await harness.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();
    // The call was a local activity (a marker), not a scheduled one.
    const events = history.events ?? [];
    expect(
      events.some((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity'),
    ).toBe(true);
    expect(
      events.some(
        (event) =>
          event.activityTaskScheduledEventAttributes !== undefined &&
          event.activityTaskScheduledEventAttributes !== null,
      ),
    ).toBe(false);
    const state = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
    const messages = state.body.values.messages;
    expect(messages.map((message) => message.type)).toEqual(['human', 'ai']);
    expect(messages[1]!.response_metadata).toMatchObject({ stopped: true });
    // What the model had sent when the Stop came, and not the whole answer.
    expect(messages[1]!.content.startsWith('word word word word word word word word word word ')).toBe(true);
    expect(messages[1]!.content.length).toBeLessThan(1000);
    expect(anthropic.violations).toEqual([]);
    expect(await replayed(harness, threadId)).toBe('ok');
  });
});
