/**
 * The LangChain view of a thread's transcript as JSON text, kept per thread so that the next
 * answer converts and serializes only the messages appended since. `runs/wait` answers every
 * message of the thread (LangGraph's contract): at turn 1,000 that is ~400 KiB of JSON, which
 * would otherwise be rebuilt from the whole transcript at every turn. The text is exactly
 * `JSON.stringify(toLangChainMessages(messages))`.
 *
 * What is kept is trusted only for the very message objects it was made from: the transcript
 * reader hands back the same objects for the messages it kept, and new ones after a compaction
 * or a fork, so any other transcript is converted whole.
 */
import { LRUCache } from 'lru-cache';
import type { Message } from '../../common/transcript';
import { toLangChainMessage } from './langchain-messages';

interface Kept {
  /** The messages converted, in order: compared by identity with the next transcript's front. */
  messages: readonly Message[];
  /** Their LangChain messages' JSON, comma-separated, without the brackets. */
  body: string;
  /** The tools called so far, by tool use id (a tool message names its tool). */
  toolNames: Map<string, string>;
}

export interface LangChainJsonOptions {
  /** Characters of JSON kept across all threads; the least recently used go first. @default 16 Mi */
  keptChars?: number;
}

export class LangChainJson {
  /** The least recently used go first; a body larger than the limit is not kept. */
  readonly #kept: LRUCache<string, Kept>;

  constructor(options: LangChainJsonOptions = {}) {
    this.#kept = new LRUCache({
      maxSize: options.keptChars ?? 16 * 1024 * 1024,
      sizeCalculation: (kept) => Math.max(1, kept.body.length),
    });
  }

  /** `JSON.stringify(toLangChainMessages(messages))`, for the transcript of `threadId`. */
  of(threadId: string, messages: readonly Message[]): string {
    const kept = this.#kept.peek(threadId);
    this.#kept.delete(threadId);
    const start =
      kept !== undefined && isFrontOf(kept.messages, messages)
        ? kept
        : { messages: [], body: '', toolNames: new Map<string, string>() };
    let body = start.body;
    for (let index = start.messages.length; index < messages.length; index++) {
      for (const view of toLangChainMessage(messages[index]!, start.toolNames)) {
        const json = JSON.stringify(view);
        body = body === '' ? json : `${body},${json}`;
      }
    }
    this.#kept.set(threadId, { messages: messages.slice(), body, toolNames: start.toolNames });
    return `[${body}]`;
  }
}

/** Whether `front` is the first messages of `messages`, object for object. */
function isFrontOf(front: readonly Message[], messages: readonly Message[]): boolean {
  if (front.length > messages.length) return false;
  for (let index = 0; index < front.length; index++) if (front[index] !== messages[index]) return false;
  return true;
}
