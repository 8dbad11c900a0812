/**
 * The live channel (decision 0340): a model call's text reaches streams from the worker that runs
 * it, never through Temporal's history, and every promise of the streams holds: live, re-attached
 * mid-answer with nothing missing or doubled, and read only with the API's token.
 */
import { randomUUID } from 'node:crypto';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import type { Client } from '@temporalio/client';
import { loadEncryptionKeys } from '../../codec/keys';
import { LiveTextKeys, liveTokenLifetimeMs } from '../../codec/live-text-token';
import type { AssistantMessage } from '../../common/transcript';
import { workflowIdFor } from '../../common/thread';
import { apiHarness, call, userInput, waitRun } from '../helpers/api';
import { deltaText, durable, readSse, type SseEvent } from '../helpers/sse';
import { eventually } from '../helpers/temporal';

jest.setTimeout(180_000);

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');
const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * Every event of the thread's workflow, over each run it continued as new from: the test server
 * suggests continue-as-new at 150 events, so a history-channel answer ends in a fresh run of a
 * dozen events, and the newest run alone shows no signal at all.
 */
async function historyOf(client: Client, threadId: string) {
  const runs = [];
  let runId: string | undefined;
  for (;;) {
    const events =
      (await client.workflow.getHandle(workflowIdFor(threadId), runId).fetchHistory()).events ?? [];
    runs.unshift(events);
    const previous = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (previous === undefined || previous === null || previous === '') return runs.flat();
    runId = previous;
  }
}

/** Signals that carried text into the log (the history channel's deltas). */
const signalled = (events: Awaited<ReturnType<typeof historyOf>>) =>
  events.filter(
    (event) =>
      event.workflowExecutionSignaledEventAttributes?.signalName === '__temporal_workflow_stream_publish',
  ).length;

/**
 * A workflow task's own events: how many there are depends on how the worker's polls fell (a task
 * that timed out under load, a query or signal that arrived mid-task), not on the answer. One full
 * CI run counted 4 more of them for one answer than the other; what the answer's length could add
 * (signals, activity events, timers) is in the rest.
 */
const workflowTaskBookkeeping = (event: Awaited<ReturnType<typeof historyOf>>[number]) =>
  Boolean(
    event.workflowTaskScheduledEventAttributes ??
    event.workflowTaskStartedEventAttributes ??
    event.workflowTaskCompletedEventAttributes ??
    event.workflowTaskTimedOutEventAttributes ??
    event.workflowTaskFailedEventAttributes,
  );

/** The URL of the live text endpoint serving the thread's model call now, from Temporal's description. */
async function liveUrlOf(client: Client, workflowId: string): Promise<string> {
  return eventually(
    async () => {
      const described = await client.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId },
      });
      const pending = described.pendingActivities?.find(
        (activity) => activity.activityType?.name === 'callModel',
      );
      const identity = pending?.lastWorkerIdentity ?? '';
      return identity.includes(' live=') ? identity.split(' live=')[1] : undefined;
    },
    30_000,
    'the model call to start on a worker with a live URL',
  );
}

describe('model text on the live channel', () => {
  const harness = apiHarness(() => ({ KEEL_MODEL: 'scripted:typewriter' }));

  it('adds no history event for a typewriter answer over an instant one (± 2), and signals nothing', async () => {
    const counts: Record<string, number> = {};
    for (const model of ['scripted:demo', 'scripted:typewriter']) {
      const threadId = `h-${randomUUID()}`;
      await call(harness.base, 'POST', '/threads', { thread_id: threadId });
      const waited = await waitRun(harness.base, threadId, userInput(words(60), { config: { model } }));
      expect(waited.status).toBe(200);
      const events = await historyOf(harness.client, threadId);
      expect(signalled(events)).toBe(0);
      counts[model] = events.filter((event) => !workflowTaskBookkeeping(event)).length;
    }
    expect(Math.abs(counts['scripted:typewriter']! - counts['scripted:demo']!)).toBeLessThanOrEqual(2);
  });

  it('streams tokens as they are generated: the first long before the answer is complete', async () => {
    const threadId = `l-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    const arrivals: Array<{ event: string; at: number }> = [];
    const stream = await readSse(
      `${harness.base}/threads/${threadId}/runs/stream`,
      post(userInput(words(60), { stream_mode: 'keel' })),
      (event) => {
        arrivals.push({ event: event.event, at: Date.now() });
        return false;
      },
    );
    const firstDelta = arrivals.find((arrival) => arrival.event === 'message.delta')!;
    const completed = arrivals.find((arrival) => arrival.event === 'message.completed')!;
    // The typewriter takes seconds for its answer: live text comes throughout, not at its end.
    expect(completed.at - firstDelta.at).toBeGreaterThan(1_500);
    const events = durable(stream.events);
    const live = events.filter((event) => event.event === 'message.delta' && event.eventId!.includes(':'));
    expect(live.length).toBeGreaterThan(20);
    const message = events.find((event) => event.event === 'message.completed')!.data
      .message as AssistantMessage;
    expect(deltaText(events)).toBe(
      message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
    );
    expect(signalled(await historyOf(harness.client, threadId))).toBe(0);
  });

  describe.each([['messages-tuple'], ['values'], ['messages']])(
    're-attaching mid-answer in %s mode',
    (mode) => {
      it('gets the rest after the last live id, with nothing missing or doubled', async () => {
        const client = new LangGraphClient({ apiUrl: harness.base });
        const thread = await client.threads.create();
        const modes = ['messages-tuple', 'values', mode].filter(
          (candidate, index, all) => all.indexOf(candidate) === index,
        ) as Array<'messages-tuple' | 'values' | 'messages'>;
        const first: Array<{ event: string; data: unknown; id?: string }> = [];
        let runId = '';
        const controller = new AbortController();
        try {
          for await (const part of client.runs.stream(thread.thread_id, 'agent', {
            input: { messages: [{ role: 'user', content: words(80) }] },
            streamMode: modes,
            signal: controller.signal,
            onRunCreated: (meta) => {
              runId = meta.run_id;
            },
          }) as AsyncIterable<{ event: string; data: unknown; id?: string }>) {
            first.push(part);
            // Cut inside the answer, on a live piece's id.
            if (first.filter((seen) => seen.id?.includes(':') === true).length >= 15) break;
          }
        } finally {
          controller.abort();
        }
        const cut = first.at(-1)!;
        expect(cut.id).toMatch(/^\d+:\d+:\d+$/);
        const rest: typeof first = [];
        for await (const part of client.runs.joinStream(thread.thread_id, runId, {
          lastEventId: cut.id!,
          streamMode: modes,
        }) as AsyncIterable<{ event: string; data: unknown; id?: string }>)
          if (part.event !== 'metadata') rest.push(part);
        const all = [...first.filter((part) => part.event !== 'metadata'), ...rest];
        // No id twice, and the rest began with more of the same answer: still live.
        expect(new Set(all.map((part) => part.id)).size).toBe(all.length);
        expect(rest.some((part) => part.id?.includes(':') === true)).toBe(true);
        const state = await client.threads.getState<{ messages: Array<{ type: string; content: unknown }> }>(
          thread.thread_id,
        );
        const answer = state.values.messages.at(-1)!;
        expect(answer.type).toBe('ai');
        // messages-tuple: the chunks, concatenated, are the answer.
        const chunks = all
          .filter((part) => part.event === 'messages')
          .map((part) => (part.data as [{ type: string; content: unknown }])[0])
          .filter((chunk) => chunk.type === 'AIMessageChunk' && typeof chunk.content === 'string');
        expect(chunks.map((chunk) => chunk.content as string).join('')).toBe(answer.content);
        // values: the last is the thread's state.
        const values = all.filter((part) => part.event === 'values').at(-1)!.data as {
          messages: Array<{ content: unknown }>;
        };
        expect(values.messages.at(-1)!.content).toBe(answer.content);
        if (mode === 'messages') {
          // messages: each partial carries the message so far, so the last is the whole answer.
          const partials = all.filter((part) => part.event === 'messages/partial');
          const last = (partials.at(-1)!.data as Array<{ content: string }>)[0]!;
          expect(last.content).toBe(answer.content);
          const texts = partials.map((part) => (part.data as Array<{ content: string }>)[0]!.content);
          texts.forEach((text, index) => index > 0 && expect(text.startsWith(texts[index - 1]!)).toBe(true));
        }
      });
    },
  );

  it('re-attaches a native stream at a live id, and after the answer has completed', async () => {
    const threadId = `n-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    const first = await readSse(
      `${harness.base}/threads/${threadId}/runs/stream`,
      post(userInput(words(60), { stream_mode: 'keel' })),
      (event) => event.eventId?.includes(':') === true && Number(event.eventId.split(':')[2]) > 40,
    );
    const runId = first.events[0]!.data.run_id as string;
    const cut = durable(first.events).at(-1)!;
    const path = `${harness.base}/threads/${threadId}/runs/${runId}/stream?stream_mode=keel`;
    const rest = await readSse(path, { headers: { 'last-event-id': cut.eventId! } });
    const all = [...durable(first.events), ...durable(rest.events)];
    const clean = durable((await readSse(path)).events);
    const text = (events: SseEvent[]) => deltaText(events);
    expect(text(all)).toBe(text(clean));
    expect(text(all).length).toBeGreaterThan(200);
    expect(new Set(all.map((event) => event.eventId)).size).toBe(all.length);
    // After the end, from the same cut: the rest of the text in one piece, then the end.
    const late = await readSse(path, { headers: { 'last-event-id': cut.eventId! } });
    expect(text([...durable(first.events), ...durable(late.events)])).toBe(text(clean));
  });

  it('gives a stream the last characters of a stopped answer as deltas, not only in its final state', async () => {
    const threadId = `s-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    const first = await readSse(
      `${harness.base}/threads/${threadId}/runs/stream`,
      post(userInput(words(120), { stream_mode: 'keel' })),
      (event) => event.eventId?.includes(':') === true && Number(event.eventId.split(':')[2]) > 40,
    );
    const runId = first.events[0]!.data.run_id as string;
    const cut = durable(first.events).at(-1)!;
    const stopped = await call<{ status: string }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/${runId}/cancel`,
      { reason: 'stopped by the user' },
    );
    expect(stopped.body.status).toBe('cancelled');
    // Re-attached after the Stop: the live text is over, and the log brings what the client lacks.
    const rest = await readSse(`${harness.base}/threads/${threadId}/runs/${runId}/stream?stream_mode=keel`, {
      headers: { 'last-event-id': cut.eventId! },
    });
    const all = [...durable(first.events), ...durable(rest.events)];
    const answer = all.find((event) => event.event === 'message.completed')!.data.message as AssistantMessage;
    const kept = answer.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect(kept.length).toBeGreaterThan(deltaText(durable(first.events)).length);
    expect(deltaText(all)).toBe(kept);
    expect(new Set(all.map((event) => event.eventId)).size).toBe(all.length);
  });

  it('picks up the call under way when the thread stream resumes at a plain offset', async () => {
    const threadId = `p-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    // Until the call is announced: its id is a plain offset, the client has none of its text.
    const first = await readSse(
      `${harness.base}/threads/${threadId}/runs/stream`,
      post(userInput(words(120), { stream_mode: 'keel' })),
      (event) => event.event === 'message.started',
    );
    const started = durable(first.events).at(-1)!;
    expect(started.eventId).toMatch(/^\d+$/);
    const arrivals: Array<{ event: string; at: number }> = [];
    const resumed = await readSse(
      `${harness.base}/threads/${threadId}/stream?starting_after=${started.eventId!}`,
      {},
      (event) => {
        arrivals.push({ event: event.event, at: Date.now() });
        return event.event === 'run.completed';
      },
    );
    const events = durable(resumed.events);
    const live = events.filter((event) => event.event === 'message.delta' && event.eventId!.includes(':'));
    expect(live.length).toBeGreaterThan(10);
    // Live, not whole with the answer: the text streams for seconds before it is complete.
    const firstDelta = arrivals.find((arrival) => arrival.event === 'message.delta')!;
    const completed = arrivals.find((arrival) => arrival.event === 'message.completed')!;
    expect(completed.at - firstDelta.at).toBeGreaterThan(1_000);
    const message = events.find((event) => event.event === 'message.completed')!.data
      .message as AssistantMessage;
    expect(deltaText(events)).toBe(
      message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
    );
    expect(new Set(events.map((event) => event.eventId)).size).toBe(events.length);
    // Log events the cursor covered are not sent again (a live piece's id begins with the offset it follows).
    const logged = events.filter((event) => !event.eventId!.includes(':'));
    expect(logged.every((event) => Number(event.eventId!.split('_')[0]) > Number(started.eventId))).toBe(
      true,
    );
  });

  it('refuses the worker endpoint without a token, with a wrong, expired or other thread’s one', async () => {
    const threadId = `t-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    const created = await call<{ run_id: string }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs`,
      userInput(words(120)),
    );
    expect(created.status).toBe(200);
    const workflowId = workflowIdFor(threadId);
    const url = await liveUrlOf(harness.client, workflowId);
    const keys = new LiveTextKeys(await loadEncryptionKeys(harness.config.encryption));
    const other = new LiveTextKeys([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
    const query = new URLSearchParams({
      workflow_id: workflowId,
      run_id: created.body.run_id,
      step: '1',
      attempt: '1',
    }).toString();
    const ask = (token: string | undefined) =>
      fetch(`${url}/live-text?${query}`, {
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
    for (const token of [
      undefined,
      'not-a-token',
      other.sign(workflowId),
      keys.sign(workflowId, Date.now() - 2 * liveTokenLifetimeMs),
      keys.sign(workflowIdFor(`t-${randomUUID()}`)),
      keys.sign(workflowId).replace(/.$/, (last) => (last === 'A' ? 'B' : 'A')),
    ]) {
      const refused = await ask(token);
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toContain('word');
    }
    const allowed = await ask(keys.sign(workflowId));
    expect(allowed.status).toBe(200);
    const body = await allowed.text();
    expect(body).toContain('word');
    expect(body.trim().split('\n').at(-1)).toBe('{"end":"completed"}');
  });
});

describe('model text on the history channel (KEEL_TOKEN_CHANNEL=history)', () => {
  const harness = apiHarness(() => ({ KEEL_MODEL: 'scripted:typewriter', KEEL_TOKEN_CHANNEL: 'history' }));

  it('publishes the text into the log as before, and streams it all the same', async () => {
    expect(harness.worker.live).toBeUndefined();
    const threadId = `y-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    const stream = await readSse(
      `${harness.base}/threads/${threadId}/runs/stream`,
      post(userInput(words(60), { stream_mode: 'keel' })),
    );
    const streamed = durable(stream.events);
    const deltas = streamed.filter((event) => event.event === 'message.delta');
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.every((event) => /^\d+$/.test(event.eventId!))).toBe(true);
    // By signal, as before: a batch every 100 ms for the seconds the answer takes.
    expect(signalled(await historyOf(harness.client, threadId))).toBeGreaterThanOrEqual(deltas.length - 1);
    const message = streamed.find((event) => event.event === 'message.completed')!.data
      .message as AssistantMessage;
    expect(deltaText(streamed)).toBe(
      message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
    );
  });
});
