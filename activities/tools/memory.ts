/**
 * The memory tools (decision 0450): `remember`, `recall` and `forget` on the thread owner's
 * `["memories"]` namespace of the Store, the same items `client.store.*` reads and writes. The
 * worker opens the Store through the same adapter as the API (store/), so a memory is sealed,
 * owner-scoped and searchable as any item is. They run only for a thread with memory on: the
 * model is offered them then (their `source` is `memory`), and `runTool` hands them the owner.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { memoryNamespace, memoryToolSource } from '../../platform/memory';
import type { ToolOutcome } from '../../common/tools';
import { StoreError } from '../../store/errors';
import type { ApiSearchItem } from '../../store/store';
import { defineTool, type ToolContext } from './registry';

/** Memories a recall lists at most: what fits in a tool result the model reads whole. */
const maxRecalled = 20;
/** Characters of one memory quoted in a recall. */
const recalledChars = 2_000;

const memoryOff: ToolOutcome = {
  is_error: true,
  content: 'Memory is off for this thread: its config (or its assistant) sets `memory: true` to turn it on.',
};

/**
 * A remembered item's key when the model names none: from the call's idempotency key, so a
 * repeat of the same call writes the same item, and never a second one.
 */
export const memoryKeyOf = (idempotencyKey: string): string =>
  `memory-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 16)}`;

/** The store's refusal (a value too large, a database down) as a result the model reads. */
async function answering(work: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StoreError && error.status !== 503)
      return { is_error: true, content: error.message };
    throw error;
  }
}

const textOf = (value: Record<string, unknown>): string =>
  typeof value.text === 'string' ? value.text : JSON.stringify(value);

function recalledLine(item: ApiSearchItem): string {
  const text = textOf(item.value);
  const quoted = text.length > recalledChars ? `${text.slice(0, recalledChars)}…` : text;
  const score = item.score === null ? '' : ` (score ${item.score.toFixed(3)})`;
  return `- [${item.key}]${score} ${quoted}`;
}

const memoryOf = (context: ToolContext) => context.memory;

export const rememberTool = defineTool({
  name: 'remember',
  description:
    "Remember a fact or preference for later conversations with this user (the user's long-term memory). " +
    'Give a `key` to replace what was remembered under it; without one, a new memory is kept.',
  input: z.object({
    text: z.string().min(1).max(10_000).describe('What to remember, in a sentence'),
    key: z.string().min(1).max(200).optional().describe('A name to replace or forget it by later'),
  }),
  flags: { sideEffects: true, sensitive: true },
  source: memoryToolSource,
  run({ text, key }, context) {
    const memory = memoryOf(context);
    if (memory === undefined) return Promise.resolve(memoryOff);
    const itemKey = key ?? memoryKeyOf(context.idempotencyKey);
    return answering(async () => {
      const address = { owner: memory.owner, namespace: memoryNamespace, key: itemKey };
      const existing = await memory.store.get({ ...address, refreshTtl: false });
      // A repeat of this call (or the same fact again) writes nothing: the item already says it.
      if (existing === null || textOf(existing.value) !== text)
        await memory.store.put({ ...address, value: { text }, index: ['text'], ttl: null });
      return { is_error: false, content: `Remembered [${itemKey}]: ${text}` };
    });
  },
});

export const recallTool = defineTool({
  name: 'recall',
  description:
    "Search the user's long-term memory (facts and preferences remembered in earlier conversations). " +
    'With a `query`, the memories that match it best; without one, the most recent.',
  input: z.object({
    query: z.string().max(2_000).optional().describe('What to look for, in words'),
    limit: z.number().int().min(1).max(maxRecalled).optional().describe('At most this many (10 by default)'),
  }),
  flags: { sideEffects: false, sensitive: false },
  source: memoryToolSource,
  run({ query, limit }, context) {
    const memory = memoryOf(context);
    if (memory === undefined) return Promise.resolve(memoryOff);
    return answering(async () => {
      const found = await memory.store.search({
        owner: memory.owner,
        prefix: memoryNamespace,
        filter: null,
        query: query === undefined || query.trim() === '' ? null : query,
        limit: limit ?? 10,
        offset: 0,
        refreshTtl: true,
      });
      if (found.length === 0)
        return {
          is_error: false,
          content: query === undefined ? 'No memories yet.' : `No memories match "${query}".`,
        };
      return { is_error: false, content: `Recalled ${found.length}:\n${found.map(recalledLine).join('\n')}` };
    });
  },
});

export const forgetTool = defineTool({
  name: 'forget',
  description: "Delete one memory from the user's long-term memory, by the key `remember` or `recall` gave.",
  input: z.object({ key: z.string().min(1).max(256).describe("The memory's key, as [key] showed it") }),
  flags: { sideEffects: true, sensitive: true },
  source: memoryToolSource,
  run({ key }, context) {
    const memory = memoryOf(context);
    if (memory === undefined) return Promise.resolve(memoryOff);
    return answering(async () => {
      const address = { owner: memory.owner, namespace: memoryNamespace, key };
      const existing = await memory.store.get({ ...address, refreshTtl: false });
      if (existing === null) return { is_error: false, content: `No memory [${key}] to forget.` };
      await memory.store.delete(address);
      return { is_error: false, content: `Forgot [${key}]: ${textOf(existing.value)}` };
    });
  },
});

export const memoryTools = [rememberTool, recallTool, forgetTool];
