/**
 * Stop keeps what was said (issue 31, decision 0370): a run stopped while its answer streams
 * commits the text streamed so far as an answer marked stopped, seen in state, history and
 * export; the next turn's request is valid for Anthropic and OpenAI (real SDKs, fake servers that
 * refuse what the real APIs refuse); a worker that replays the history without a cache agrees.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Run } from '../../common/run';
import { workflowIdFor } from '../../common/thread';
import { loadDataConverter } from '../../codec/data-converter';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server';
import { apiHarness, call, userInput } from '../helpers/api';
import { deltaText, readSse, type SseEvent } from '../helpers/sse';
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
const longQuestion = `Please repeat: ${'every word of this sentence, '.repeat(60)}`;

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
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {
      config: { model: 'scripted:typewriter' },
    });
    const threadId = thread.body.thread_id;
    const runId = randomUUID();
    // Keel's own events from the run's start, as `keel chat` reads them.
    const events: SseEvent[] = [];
    await readSse(
      `${base}/threads/${threadId}/runs/stream`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(userInput(longQuestion, { run_id: runId, stream_mode: 'keel' })),
      },
      (event) => {
        events.push(event);
        return event.event === 'message.delta' && deltaText(events).length >= chars;
      },
    );
    const pressed = Date.now();
    const cancelled = await call<Run>(base, 'POST', `/threads/${threadId}/runs/${runId}/cancel`, {
      reason: 'stopped by the user',
    });
    return {
      threadId,
      runId,
      streamed: deltaText(events),
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
    const next = await call<{ messages: AiView[] }>(
      base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      userInput('go on, please', { config: { model } }),
    );
    expect(next.status).toBe(200);
    const sent = JSON.stringify(lastMessages());
    expect(sent).toContain('every word of this sentence');
    expect(sent).toContain('go on, please');
    const after = await call<StateView>(base, 'GET', `/threads/${threadId}/state`);
    expect(after.body.values.messages.map((message) => message.type)).toEqual(['human', 'ai', 'human', 'ai']);
  });

  it('replays the history of a stopped run, and a restarted worker without a cache goes on from it', async () => {
    const { base, client, config } = harness;
    const { threadId } = await stopMidStream(30);
    const handle = client.workflow.getHandle(workflowIdFor(threadId));
    const replayed = await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: process.env.KEEL_TEST_BUNDLE! },
        dataConverter: await loadDataConverter(config.encryption),
      },
      await handle.fetchHistory(),
      workflowIdFor(threadId),
    ).then(
      () => 'ok',
      (error: unknown) => String(error),
    );
    expect(replayed).toBe('ok');

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
