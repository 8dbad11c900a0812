/**
 * Token-to-client latency: milliseconds from a text delta leaving the fake Anthropic server to
 * the same text arriving at an SSE client of `POST /threads/:id/runs/stream`, through the real
 * SDK, the model activity's ~100 ms delta batches, the workflow's log and the API's long poll.
 *
 *   npx tsx bench/stream-latency.ts [runs=5] [tokens=200] [tokenDelayMs=20]
 */
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import pino from 'pino';
import { startApi } from '../api/server';
import { startFakeAnthropic } from '../test/fakes/anthropic-server';
import globalSetup from '../test/setup/global-setup';

async function main(): Promise<void> {
  const [runs = 5, tokens = 200, tokenDelayMs = 20] = process.argv.slice(2).map(Number);
  // The helpers install the worker runtime on load, which must happen before the dev server starts.
  const { closeTestClient, startTestWorker, testClient, testConfig } =
    await import('../test/helpers/temporal.js');
  await globalSetup();
  const sentAt = new Map<string, number>();
  const fake = await startFakeAnthropic({
    responder: () => ({
      kind: 'message',
      content: [{ type: 'text', text: Array.from({ length: tokens }, (_, index) => `w${index}`).join(' ') }],
      tokenDelayMs,
      onSent: (piece) => sentAt.set(piece.trim(), performance.now()),
    }),
  });
  const config = await testConfig({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    KEEL_MODEL: 'anthropic:claude-sonnet-4-5',
  });
  const client = await testClient();
  const worker = await startTestWorker({ config });
  const api = await startApi({
    client,
    config,
    logger: pino({ level: 'silent' }),
    host: '127.0.0.1',
    port: 0,
  });
  const latencies: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const threadId = `bench-${randomUUID()}`;
      sentAt.clear();
      const response = await fetch(`${api.url}/threads/${threadId}/runs/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          if_not_exists: 'create',
          input: { messages: [{ role: 'user', content: 'go' }] },
        }),
      });
      let done = false;
      const parser = createParser({
        onEvent: (message) => {
          const now = performance.now();
          if (message.event === 'end') done = true;
          if (message.event !== 'message.delta') return;
          const { text } = JSON.parse(message.data) as { text: string };
          if (process.env.DEBUG_BENCH) process.stderr.write(`${message.id} ${message.data}\n`);
          for (const token of text.split(/\s+/).filter(Boolean)) {
            const sent = sentAt.get(token);
            if (sent !== undefined) latencies.push(now - sent);
          }
        },
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      while (!done) {
        const { done: finished, value } = await reader.read();
        if (finished) break;
        parser.feed(decoder.decode(value as Uint8Array, { stream: true }));
      }
      await reader.cancel();
    }
  } finally {
    await api.stop();
    await worker.stop();
    await fake.close();
    await closeTestClient();
    await globalThis.keelTestEnvironment?.teardown();
  }
  if (process.env.DEBUG_BENCH) process.stderr.write(`model requests: ${fake.requests.length}\n`);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  process.stdout.write(
    `token → SSE client latency over ${latencies.length} tokens (${runs} runs × ${tokens} tokens, ${tokenDelayMs} ms apart): ` +
      `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${at(1).toFixed(1)} ms\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
