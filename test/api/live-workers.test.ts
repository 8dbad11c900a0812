/**
 * The API reads live text only from workers where the operator said workers are (decision 0390).
 * A worker's identity names its live URL, and anything that can poll the task queue can name any
 * URL: the API would send it a token for the thread and buffer whatever it answered. Here a real
 * worker advertises a hostile endpoint; the answer still reaches the client whole.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AssistantMessage } from '../../common/transcript';
import { apiHarness, call, userInput } from '../helpers/api';
import { deltaText, durable, readSse } from '../helpers/sse';

jest.setTimeout(120_000);

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');

/** An endpoint posing as a worker's live text: it counts requests and what it managed to send. */
interface Impostor {
  url: string;
  requests: number;
  bytesSent: number;
  server: Server;
}

/** `flood`: answers 200 and one line that never ends, as fast as the reader takes it. */
function impostor(behaviour: 'flood' | 'record'): Impostor {
  const state = { url: '', requests: 0, bytesSent: 0 } as Impostor;
  const chunk = Buffer.alloc(64 * 1024, 'x');
  state.server = createServer((_request, response) => {
    state.requests++;
    if (behaviour === 'record') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/x-ndjson' });
    response.write('{"text":"');
    let open = true;
    response.on('close', () => (open = false));
    const pump = () => {
      while (open) {
        state.bytesSent += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
  return state;
}

/** An impostor listening on loopback for the describe block (from its beforeAll to its afterAll). */
function listening(behaviour: 'flood' | 'record'): Impostor {
  const target = impostor(behaviour);
  beforeAll(async () => {
    await new Promise<void>((resolve) => target.server.listen(0, '127.0.0.1', resolve));
    target.url = `http://127.0.0.1:${(target.server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    target.server.closeAllConnections();
    return new Promise((resolve) => target.server.close(resolve));
  });
  return target;
}

/** Streams one typewriter answer in Keel's native mode: its deltas' text and the answer's. */
async function streamAnswer(base: string): Promise<{ streamed: string; answer: string }> {
  const threadId = `w-${randomUUID()}`;
  await call(base, 'POST', '/threads', { thread_id: threadId });
  const stream = await readSse(`${base}/threads/${threadId}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(userInput(words(50), { stream_mode: 'keel' })),
  });
  const events = durable(stream.events);
  const message = events.find((event) => event.event === 'message.completed')!.data
    .message as AssistantMessage;
  return {
    streamed: deltaText(events),
    answer: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
  };
}

describe('a worker advertising an address the API does not allow', () => {
  const target = listening('record');
  const harness = apiHarness(() => ({
    KEEL_MODEL: 'scripted:typewriter',
    KEEL_WORKER_LIVE_URL: target.url,
    // The workers are elsewhere on loopback; the advertised port is not theirs.
    KEEL_API_LIVE_WORKERS: '127.0.0.1:1',
  }));

  it('is never sent a token, and the client gets the answer whole', async () => {
    const { streamed, answer } = await streamAnswer(harness.base);
    expect(answer.length).toBeGreaterThan(200);
    expect(streamed).toBe(answer);
    expect(target.requests).toBe(0);
  });
});

describe('a worker whose live text is one line that never ends', () => {
  const target = listening('flood');
  // Loopback, as the default list allows.
  const harness = apiHarness(() => ({ KEEL_MODEL: 'scripted:typewriter', KEEL_WORKER_LIVE_URL: target.url }));

  it('is cut off after 256 KiB and asked once; the client gets the answer whole', async () => {
    const { streamed, answer } = await streamAnswer(harness.base);
    expect(answer.length).toBeGreaterThan(200);
    expect(streamed).toBe(answer);
    expect(target.requests).toBe(1);
    // The cap plus what the sockets' buffers hold, not what loopback carries in the seconds the
    // answer takes (gigabytes, all of it kept as one string in the API).
    expect(target.bytesSent).toBeLessThan(16 * 1024 * 1024);
  });
});
