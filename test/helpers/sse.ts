/** Reading SSE responses in tests, with the same parser the `eventsource` client uses. */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { compareStreamPositions, parseStreamId } from '../../common/stream-ids';

export interface SseEvent {
  /** The log offset the id begins with (common/stream-ids.ts). */
  id?: number;
  /** The id as sent: `N`, or with the live text's attempt and characters (`N:a:c`, `N_a_c`). */
  eventId?: string;
  event: string;
  data: Record<string, unknown>;
}

export interface SseResponse {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** `: ping` comments seen. */
  comments: string[];
  /** The JSON body when the answer was not a stream (an error). */
  body?: Record<string, unknown>;
}

export function toSseEvent(message: EventSourceMessage): SseEvent {
  return {
    ...(message.id === undefined || message.id === ''
      ? {}
      : { id: parseStreamId(message.id)?.offset ?? Number.NaN, eventId: message.id }),
    event: message.event ?? 'message',
    data: JSON.parse(message.data) as Record<string, unknown>,
  };
}

/** Reads a whole SSE response (until the server ends it, or `stopAfter` returns true). */
export async function readSse(
  url: string,
  init: RequestInit = {},
  stopAfter: (event: SseEvent) => boolean = () => false,
): Promise<SseResponse> {
  const controller = new AbortController();
  const response = await fetch(url, { ...init, signal: controller.signal });
  const result: SseResponse = {
    status: response.status,
    headers: response.headers,
    events: [],
    comments: [],
  };
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    result.body = (await response.json()) as Record<string, unknown>;
    return result;
  }
  let stop = false;
  const parser = createParser({
    onEvent: (message) => {
      const event = toSseEvent(message);
      result.events.push(event);
      if (stopAfter(event)) stop = true;
    },
    onComment: (comment) => result.comments.push(comment.trim()),
  });
  const decoder = new TextDecoder();
  const reader = response.body!.getReader();
  try {
    while (!stop) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value as Uint8Array, { stream: true }));
    }
  } finally {
    controller.abort();
  }
  return result;
}

/** The durable events only (those with an id). */
export const durable = (events: SseEvent[]): SseEvent[] => events.filter((event) => event.id !== undefined);

/** Text of the last attempt of each step, as a client rebuilds it from `message.delta` events. */
export function deltaText(events: SseEvent[]): string {
  const latest = new Map<number, { attempt: number; text: string }>();
  for (const { event, data } of events) {
    if (event !== 'message.delta') continue;
    const step = data.step as number;
    const attempt = data.attempt as number;
    const seen = latest.get(step);
    if (seen === undefined || attempt > seen.attempt) latest.set(step, { attempt, text: '' });
    const current = latest.get(step)!;
    if (current.attempt === attempt) current.text += data.text as string;
  }
  return [...latest.values()].map((entry) => entry.text).join('');
}

/** Whether the events' ids strictly increase, as one stream writes them. */
export function idsIncrease(events: SseEvent[]): boolean {
  const positions = events.map((event) => parseStreamId(event.eventId ?? ''));
  return positions.every(
    (position, index) =>
      position !== undefined && (index === 0 || compareStreamPositions(positions[index - 1]!, position) < 0),
  );
}
