/**
 * The stream operations' cursors and modes as the OpenAPI document gives them (issue 32): every
 * id a stream sends matches the documented `Last-Event-ID` pattern, every id the pattern allows
 * is taken, anything else is 422 naming where it came from, `stream_mode: null` is the default,
 * and `KEEL_STREAM_MAX_S` bounds a stream that would follow a thread for as long as it lives.
 * Schemathesis fuzzes the same operations (test/api/openapi.test.ts).
 */
import { apiHarness, call, userInput } from '../helpers/api';
import { readSse, type SseEvent } from '../helpers/sse';

jest.setTimeout(120_000);

interface Parameter {
  name: string;
  in: string;
  schema: { pattern?: string };
}

describe('stream cursors, as documented', () => {
  // Streams of this file's runs end well within it; the thread stream, which does not, is cut.
  const streamMaxS = 8;
  const harness = apiHarness(() => ({ KEEL_STREAM_MAX_S: String(streamMaxS) }));
  let patterns: Record<'run' | 'thread', RegExp>;

  beforeAll(async () => {
    const document = (
      await call<{ paths: Record<string, { get: { parameters: Parameter[] } }> }>(
        harness.base,
        'GET',
        '/openapi.json',
      )
    ).body;
    const pattern = (path: string) => {
      const parameters = document.paths[path]!.get.parameters;
      const header = parameters.find((parameter) => parameter.name === 'Last-Event-ID')!;
      const query = parameters.find((parameter) => parameter.name === 'starting_after')!;
      expect(header.schema.pattern).toBe(query.schema.pattern);
      return new RegExp(header.schema.pattern!);
    };
    patterns = {
      run: pattern('/threads/{thread_id}/runs/{run_id}/stream'),
      thread: pattern('/threads/{thread_id}/stream'),
    };
  });

  const streamed = async (threadId: string, mode: string): Promise<{ runId: string; events: SseEvent[] }> => {
    const response = await readSse(`${harness.base}/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...userInput('think: 1\nrun: echo cursor'), stream_mode: JSON.parse(mode) }),
    });
    expect(response.status).toBe(200);
    return {
      runId: response.events[0]!.data.run_id as string,
      events: response.events.filter((event) => event.eventId !== undefined),
    };
  };

  const newThread = async () =>
    (await call<{ thread_id: string }>(harness.base, 'POST', '/threads', {})).body.thread_id;

  it('sends only ids the document allows, in both vocabularies, and takes each of them back', async () => {
    const threadId = await newThread();
    const langgraph = await streamed(threadId, '["values","messages"]');
    const native = await streamed(threadId, '"keel"');
    const inside = langgraph.events.filter((event) => event.eventId!.includes('-'));
    expect(inside.length).toBeGreaterThan(0);
    for (const event of langgraph.events) expect(event.eventId).toMatch(patterns.run);
    for (const event of native.events) {
      expect(event.eventId).toMatch(patterns.run);
      expect(event.eventId).toMatch(patterns.thread);
    }
    const rest = await readSse(
      `${harness.base}/threads/${threadId}/runs/${langgraph.runId}/stream?stream_mode=${encodeURIComponent('["values","messages"]')}`,
      { headers: { 'last-event-id': inside.at(-1)!.eventId! } },
    );
    const after = langgraph.events.findIndex((event) => event.eventId === inside.at(-1)!.eventId);
    expect(rest.events.filter((event) => event.eventId !== undefined).map((event) => event.eventId)).toEqual(
      langgraph.events.slice(after + 1).map((event) => event.eventId),
    );
  });

  it('takes a LangGraph id inside an event on a keel stream, sending that event again whole', async () => {
    const threadId = await newThread();
    const native = await streamed(threadId, '"keel"');
    const target = native.events[2]!;
    const offset = target.eventId!.split(/[:_]/)[0]!;
    expect(`${offset}-0`).toMatch(patterns.run);
    const rest = await readSse(
      `${harness.base}/threads/${threadId}/runs/${native.runId}/stream?stream_mode=keel&starting_after=${offset}-0`,
    );
    expect(rest.status).toBe(200);
    const ids = rest.events.filter((event) => event.eventId !== undefined).map((event) => event.eventId);
    expect(ids[0]!.split(/[:_]/)[0]).toBe(offset);
    expect(ids.at(-1)).toBe(native.events.at(-1)!.eventId);
  });

  it('treats -1 and an empty cursor as none, and refuses any other with 422 naming the header or the query', async () => {
    const threadId = await newThread();
    const { runId, events } = await streamed(threadId, '"values"');
    const url = `${harness.base}/threads/${threadId}/runs/${runId}/stream`;
    for (const init of [{ headers: { 'last-event-id': '-1' } }, {}]) {
      const whole = await readSse(url, init);
      expect(whole.events.filter((event) => event.eventId !== undefined)).toHaveLength(events.length);
    }
    expect((await readSse(`${url}?starting_after=-1`)).status).toBe(200);
    expect((await readSse(`${url}?starting_after=`)).status).toBe(200);
    const header = await readSse(url, { headers: { 'last-event-id': 'abc' } });
    expect(header).toMatchObject({ status: 422, body: { error: { param: 'Last-Event-ID' } } });
    const query = await readSse(`${url}?starting_after=1%3A2`);
    expect(query).toMatchObject({ status: 422, body: { error: { param: 'starting_after' } } });
    // The thread stream speaks Keel's events only: no LangGraph `-k` ids, so none is taken.
    expect('3-0').not.toMatch(patterns.thread);
    const thread = await readSse(`${harness.base}/threads/${threadId}/stream`, {
      headers: { 'last-event-id': '3-0' },
    });
    expect(thread).toMatchObject({ status: 422, body: { error: { param: 'Last-Event-ID' } } });
  });

  it('takes stream_mode null as the default, values', async () => {
    const threadId = await newThread();
    const response = await readSse(`${harness.base}/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...userInput('hello'), stream_mode: null }),
    });
    expect(response.status).toBe(200);
    expect(new Set(response.events.slice(1).map((event) => event.event))).toEqual(new Set(['values']));
  });

  it('closes a thread stream after KEEL_STREAM_MAX_S without end, and the client resumes with Last-Event-ID', async () => {
    const threadId = await newThread();
    const before = await streamed(threadId, '"keel"');
    const follow = (after: string) =>
      readSse(`${harness.base}/threads/${threadId}/stream`, { headers: { 'last-event-id': after } });
    const started = Date.now();
    const following = follow(before.events.at(-1)!.eventId!);
    await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('hello'));
    const first = await following;
    const elapsed = (Date.now() - started) / 1_000;
    expect(elapsed).toBeGreaterThanOrEqual(streamMaxS - 0.5);
    expect(elapsed).toBeLessThan(streamMaxS + 20);
    expect(first.status).toBe(200);
    const events = first.events.filter((event) => event.eventId !== undefined);
    expect(events[0]).toMatchObject({ event: 'run.created', id: before.events.at(-1)!.id! + 1 });
    expect(events.map((event) => event.event)).toContain('run.completed');
    expect(first.events.map((event) => event.event)).not.toContain('end');
    await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('again'));
    const resumed = (await follow(events.at(-1)!.eventId!)).events.filter(
      (event) => event.eventId !== undefined,
    );
    expect(resumed[0]).toMatchObject({ event: 'run.created', id: events.at(-1)!.id! + 1 });
  });
});
