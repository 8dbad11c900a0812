/**
 * 2. Token to client: milliseconds from a text delta leaving the fake Anthropic server (real
 * SSE, real SDK in the worker) to the same token arriving at an SSE client of
 * `POST /threads/:id/runs/stream`, against the same stream read straight from the fake server.
 */
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import type { FakeAnthropic } from '../../test/fakes/anthropic-server';
import type { System } from '../harness';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { percentile, showSpread, spread } from '../stats';

export interface TokenLatencyOptions {
  trials: number;
  tokens: number;
  tokenDelayMs: number;
}

/** Reads an SSE body, calling `onEvent` with each event and the time it arrived, until `done` says so. */
export async function readSse(
  response: Response,
  onEvent: (event: string | undefined, data: string, at: number) => boolean,
): Promise<void> {
  let done = false;
  const parser = createParser({
    onEvent: (message) => {
      if (onEvent(message.event, message.data, performance.now())) done = true;
    },
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  while (!done) {
    const { done: ended, value } = await reader.read();
    if (ended) break;
    parser.feed(decoder.decode(value as Uint8Array, { stream: true }));
  }
  await reader.cancel().catch(() => undefined);
}

export async function tokenLatency(
  system: System,
  fake: FakeAnthropic,
  options: TokenLatencyOptions,
): Promise<ScenarioResult> {
  const sentAt = new Map<string, number>();
  fake.setResponder(() => ({
    kind: 'message',
    content: [
      { type: 'text', text: Array.from({ length: options.tokens }, (_, index) => `w${index}`).join(' ') },
    ],
    tokenDelayMs: options.tokenDelayMs,
    onSent: (piece) => sentAt.set(piece.trim(), performance.now()),
  }));
  const latencies = (record: (token: string, at: number) => void) => (text: string, at: number) => {
    for (const token of text.split(/\s+/).filter(Boolean)) record(token, at);
  };
  const keel = { p50: [] as number[], p95: [] as number[], all: [] as number[] };
  const direct = { p50: [] as number[], p95: [] as number[], all: [] as number[] };
  const total = options.trials * 2;
  for (let trial = 0; trial < options.trials; trial++) {
    // Through Keel.
    sentAt.clear();
    const mine: number[] = [];
    const record = latencies((token, at) => {
      const sent = sentAt.get(token);
      if (sent !== undefined) mine.push(at - sent);
    });
    const response = await fetch(`${system.apiUrl}/threads/bench-stream-${randomUUID()}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        if_not_exists: 'create',
        stream_mode: 'keel',
        config: { model: 'anthropic:claude-sonnet-4-5' },
        input: { messages: [{ role: 'user', content: 'go' }] },
      }),
    });
    if (!response.ok) throw new Error(`runs/stream answered ${response.status}: ${await response.text()}`);
    await readSse(response, (event, data, at) => {
      if (process.env.DEBUG_BENCH) process.stderr.write(`${event} ${data.slice(-400)}\n`);
      if (event === 'message.delta') record((JSON.parse(data) as { text: string }).text, at);
      return event === 'end';
    });
    if (mine.length < options.tokens)
      throw new Error(`only ${mine.length} of ${options.tokens} tokens reached the client`);
    keel.p50.push(percentile(mine, 0.5));
    keel.p95.push(percentile(mine, 0.95));
    keel.all.push(...mine);
    progress.count('streams', trial * 2 + 1, total);

    // The same stream, read straight from the fake server.
    sentAt.clear();
    const theirs: number[] = [];
    const recordDirect = latencies((token, at) => {
      const sent = sentAt.get(token);
      if (sent !== undefined) theirs.push(at - sent);
    });
    const raw = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'test-key',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        stream: true,
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    await readSse(raw, (event, data, at) => {
      if (event === 'content_block_delta') {
        const delta = (JSON.parse(data) as { delta: { type: string; text?: string } }).delta;
        if (delta.type === 'text_delta') recordDirect(delta.text ?? '', at);
      }
      return event === 'message_stop';
    });
    direct.p50.push(percentile(theirs, 0.5));
    direct.p95.push(percentile(theirs, 0.95));
    direct.all.push(...theirs);
    progress.count('streams', trial * 2 + 2, total);
  }
  const added = spread(keel.p50.map((value, index) => value - direct.p50[index]!));
  return {
    rows: [
      {
        scenario: '2 token to client',
        metric: 'Keel SSE client, p50 ms',
        value: showSpread(spread(keel.p50)),
        note: `${options.trials} streams × ${options.tokens} tokens, ${options.tokenDelayMs} ms apart`,
      },
      { scenario: '', metric: 'Keel SSE client, p95 ms', value: showSpread(spread(keel.p95)) },
      {
        scenario: '',
        metric: 'direct from the model server, p50 ms',
        value: showSpread(spread(direct.p50), 2),
      },
      {
        scenario: '',
        metric: 'direct from the model server, p95 ms',
        value: showSpread(spread(direct.p95), 2),
      },
      { scenario: '', metric: 'added by Keel, p50 ms', value: showSpread(added), note: 'target < 150 ms' },
    ],
    data: {
      keel: {
        p50_ms: spread(keel.p50),
        p95_ms: spread(keel.p95),
        overall_p50_ms: percentile(keel.all, 0.5),
        overall_p95_ms: percentile(keel.all, 0.95),
      },
      direct: {
        p50_ms: spread(direct.p50),
        p95_ms: spread(direct.p95),
        overall_p50_ms: percentile(direct.all, 0.5),
        overall_p95_ms: percentile(direct.all, 0.95),
      },
      added_p50_ms: added,
      ...options,
    },
  };
}
