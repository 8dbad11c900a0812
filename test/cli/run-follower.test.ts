/**
 * `keel chat`'s streaming run follower against a real API, worker and dev server, with the
 * Anthropic provider (real SDK) talking to the fake Messages API: text arrives as deltas that add
 * up to the final message, a call retried midway shows its new attempt once (never mixed with the
 * failed one), and a connection cut mid-answer is reopened with Last-Event-ID, repeating nothing.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { KeelApiClient } from '../../cli/api-client';
import { StreamingRunFollower, type RunFollowerHandlers } from '../../cli/run-follower';
import type { LangChainMessage } from '../../api/protocol/langchain-messages';
import type { Run } from '../../common/run';
import type { AssistantMessage } from '../../common/transcript';
import { fakeAnthropicApi, retriedMidway } from '../helpers/anthropic';
import { apiHarness, call } from '../helpers/api';
import { eventually } from '../helpers/temporal';

jest.setTimeout(120_000);

/** Every callback, in order, as text a test can read. */
class Recorder implements RunFollowerHandlers {
  readonly calls: string[] = [];
  readonly deltas: string[] = [];
  readonly messages: Array<{ message: AssistantMessage; streamed: boolean }> = [];
  /** Deltas that arrived while the run was still going. */
  deltasBeforeEnd = 0;
  private finished = false;
  reconnects = 0;

  onDelta(text: string): void {
    this.deltas.push(text);
    if (!this.finished) this.deltasBeforeEnd++;
    this.calls.push(`delta:${text}`);
  }
  onRetry(attempt: number): void {
    this.calls.push(`retry:${attempt}`);
  }
  onMessage(message: AssistantMessage, streamed: boolean): void {
    this.messages.push({ message, streamed });
    this.calls.push(`message:${streamed}`);
  }
  onToolStarted(): void {}
  onToolCompleted(): void {}
  onUsage(): void {
    this.calls.push('usage');
  }
  onApproval(): Promise<void> {
    return Promise.reject(new Error('no approval expected'));
  }
  onProgress(run: Run): void {
    if (['completed', 'failed', 'cancelled'].includes(run.status)) this.finished = true;
  }
  onNotice(text: string): void {
    this.calls.push(`notice:${text}`);
  }
  onReconnecting(): void {
    this.reconnects++;
  }
}

/** A TCP proxy in front of the API that can cut every open connection, as a restart would. */
async function startCuttingProxy(target: URL): Promise<{
  url: string;
  connections: number;
  requestHeads: string[];
  cut(): void;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  const state = {
    url: '',
    connections: 0,
    requestHeads: [] as string[],
    cut() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((downstream) => {
    state.connections++;
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(downstream).add(upstream);
    // Connections are kept alive and reused: every request on them is recorded.
    downstream.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (/^(GET|POST) /.test(text)) state.requestHeads.push(text);
    });
    downstream.pipe(upstream).pipe(downstream);
    const drop = () => {
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}

const words = (count: number, tag: string) =>
  Array.from({ length: count }, (_, index) => `${tag}${index}`).join(' ');

describe('the streaming run follower', () => {
  const anthropic = fakeAnthropicApi();
  const harness = apiHarness(anthropic.env);
  afterEach(() => expect(anthropic.server.violations).toEqual([]));

  const newRun = async (api: KeelApiClient): Promise<{ threadId: string; run: Run }> => {
    const threadId = `f-${randomUUID()}`;
    await api.createThread({ thread_id: threadId });
    return { threadId, run: await api.createRun(threadId, 'stream to me', undefined) };
  };

  it('gives the answer as deltas while the run goes on; they add up to the final message', async () => {
    const answer = words(30, 'tok');
    anthropic.server.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: answer }],
      tokenDelayMs: 40,
    });
    const api = new KeelApiClient(harness.base);
    const { threadId, run } = await newRun(api);
    const recorder = new Recorder();
    const finished = await new StreamingRunFollower(api).follow(threadId, run.run_id, recorder);

    expect(finished).toMatchObject({ run_id: run.run_id, status: 'completed' });
    expect(recorder.deltas.join('')).toBe(answer);
    // Token by token: several pieces, and they came before the run's end was known.
    expect(recorder.deltas.length).toBeGreaterThan(2);
    expect(recorder.deltasBeforeEnd).toBe(recorder.deltas.length);
    expect(recorder.messages).toHaveLength(1);
    expect(recorder.messages[0]!.streamed).toBe(true);
    expect(recorder.calls.filter((entry) => entry.startsWith('retry'))).toEqual([]);
    expect(recorder.calls).toContain('usage');
  });

  it('shows a call retried midway as a note and the new attempt once, never mixed with the failed one', async () => {
    anthropic.server.enqueue(...retriedMidway);
    // `keel chat` itself, piped (not a terminal), as a script would run it.
    const threadId = `f-${randomUUID()}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'cli/keel.ts', '--url', harness.base, 'chat', threadId],
      { cwd: path.resolve(__dirname, '../..'), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await eventually(
        () => Promise.resolve(printed.includes('keel chat · thread') ? true : undefined),
        60_000,
      );
      child.stdin.write('retry me\n');
      await eventually(() => Promise.resolve(/\[run \d+ tokens/.test(printed) ? true : undefined), 60_000);
      child.stdin.end('/exit\n');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }

    expect(printed).toContain(
      'keel › lost words that \n' +
        '  ↻ the model call failed midway and was retried (attempt 2); its answer starts over:\n' +
        'keel › the answer that counts\n[run ',
    );
    expect(printed.split('the answer that counts')).toHaveLength(2);
    expect(printed.split('lost words that')).toHaveLength(2);
    expect(printed).not.toContain('never count');
    // Piped, not a terminal: no spinner frames or escape codes, only the conversation.
    expect(printed).not.toContain(String.fromCharCode(27));
    expect(printed).not.toMatch(/thinking…|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    // The state shows LangChain messages: the answer's text as its content.
    const state = await call<{ values: { messages: LangChainMessage[] } }>(
      harness.base,
      'GET',
      `/threads/${threadId}/state`,
    );
    expect(state.body.values.messages.at(-1)!.content).toEqual('the answer that counts');
  });

  it('reopens a cut connection with Last-Event-ID and shows nothing twice', async () => {
    const answer = words(80, 'cut');
    anthropic.server.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: answer }],
      tokenDelayMs: 50,
    });
    const proxy = await startCuttingProxy(new URL(harness.base));
    try {
      const api = new KeelApiClient(proxy.url);
      const { threadId, run } = await newRun(api);
      const recorder = new Recorder();
      const following = new StreamingRunFollower(api).follow(threadId, run.run_id, recorder);
      await eventually(() => Promise.resolve(recorder.deltas.length >= 2 ? true : undefined), 60_000);
      proxy.cut();
      const seenAtFirstCut = recorder.deltas.length;
      await eventually(
        () => Promise.resolve(recorder.deltas.length > seenAtFirstCut ? true : undefined),
        60_000,
        'deltas after the first reconnect',
      );
      proxy.cut();
      const finished = await following;

      expect(finished.status).toBe('completed');
      expect(recorder.reconnects).toBeGreaterThanOrEqual(2);
      expect(recorder.deltas.join('')).toBe(answer);
      expect(recorder.messages).toHaveLength(1);
      expect(recorder.messages[0]!.streamed).toBe(true);
      const streamRequests = proxy.requestHeads.filter((head) => head.includes('/stream?stream_mode=keel '));
      expect(streamRequests.length).toBeGreaterThanOrEqual(3);
      expect(streamRequests[0]).not.toMatch(/last-event-id/i);
      for (const head of streamRequests.slice(1)) expect(head).toMatch(/last-event-id: \d+/i);
    } finally {
      proxy.cut();
      await proxy.close();
    }
  });
});
