/**
 * A long typewriter answer under way: what Stop tests press Stop on. `scripted:typewriter`
 * repeats the question a token every 25 ms, so this one takes seconds.
 */
import { randomUUID } from 'node:crypto';
import { call, userInput } from './api';
import { deltaText, readSse, type SseEvent } from './sse';

export const longQuestion = `Please repeat: ${'every word of this sentence, '.repeat(60)}`;

/** Starts a long answer on a new thread and waits until `chars` of it have streamed. */
export async function streamLongAnswer(
  base: string,
  chars: number,
): Promise<{ threadId: string; runId: string; streamed: string }> {
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
  return { threadId, runId, streamed: deltaText(events) };
}
