/**
 * Messages a person sent that the API has not yet taken. Each is kept (in this browser's storage,
 * so a reload keeps it too) and shown as pending until a run holds it; delivery is retried while
 * the API cannot be reached, and is idempotent: the thread is created with `if_exists:
 * "do_nothing"` and the run with the message's own `Idempotency-Key`, so a request that reached
 * the API before its answer was lost makes nothing twice
 * (docs/decisions/0361-messages-kept-until-the-api-takes-them.md).
 */
import { useSyncExternalStore } from 'react';
import { keelRequest, segment, type Connection } from './keel-api';

/** `taken`: a run holds it (`runId`); it stays on screen until the thread's messages show it. */
export type OutgoingState = 'sending' | 'waiting' | 'failed' | 'taken';

export interface Outgoing {
  /** The message's own id, sent as the run's `Idempotency-Key`. */
  key: string;
  threadId: string;
  /** Set when this message makes its thread (a new thread in the page): how to create it. */
  create?: { metadata: Record<string, unknown>; config: Record<string, unknown> } | undefined;
  /** Sent from a new thread's view, which opens the thread once it is made. */
  opens?: boolean | undefined;
  text: string;
  assistantId: string;
  /** A model for this run (an assistant's thread takes its model from the assistant otherwise). */
  model?: string | undefined;
  /** An edit: the checkpoint the thread goes on from. */
  checkpointId?: string | undefined;
  /** Where in the thread's messages this one goes: what follows it on screen is not shown. */
  at: number;
  state: OutgoingState;
  runId?: string | undefined;
  /** Why it is not sent yet, in words. */
  problem?: string | undefined;
}

const storageKey = 'keel.outbox';

function load(): Outgoing[] {
  try {
    const stored: unknown = JSON.parse(window.localStorage.getItem(storageKey) ?? '[]');
    // Whatever was under way when the page closed is sent again (idempotently) when it opens.
    if (!Array.isArray(stored)) return [];
    // A message a run took is in its thread now; anything else is sent again (idempotently).
    return (stored as Outgoing[])
      .filter((item) => item.state !== 'taken')
      .map((item) => ({ ...item, state: item.state === 'failed' ? 'failed' : 'waiting' }));
  } catch {
    return [];
  }
}

let items: Outgoing[] = load();
const listeners = new Set<() => void>();

function publish(next: Outgoing[]): void {
  items = next;
  try {
    window.localStorage.setItem(storageKey, JSON.stringify(items));
  } catch {
    // Storage full or off: the message is still kept for as long as the page is open.
  }
  for (const listener of listeners) listener();
}

export const outbox = {
  add(item: Outgoing): void {
    publish([...items, item]);
  },
  update(key: string, change: Partial<Outgoing>): void {
    publish(items.map((item) => (item.key === key ? { ...item, ...change } : item)));
  },
  remove(key: string): void {
    if (items.some((item) => item.key === key)) publish(items.filter((item) => item.key !== key));
  },
  get(key: string): Outgoing | undefined {
    return items.find((item) => item.key === key);
  },
  all: (): Outgoing[] => items,
  subscribe: (listener: () => void): (() => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

/** The messages still to be taken, oldest first. */
export function useOutbox(): Outgoing[] {
  return useSyncExternalStore(outbox.subscribe, outbox.all, outbox.all);
}

/** A fresh id, for a message or a thread the page makes. */
export const freshId = (): string => crypto.randomUUID();

/** Hands one message to the API: the run that now holds it. */
export async function deliver(
  connection: Connection,
  item: Outgoing,
  streamMode: readonly string[],
): Promise<{ run_id: string }> {
  if (item.create !== undefined)
    await keelRequest(connection, 'POST', '/threads', {
      thread_id: item.threadId,
      metadata: item.create.metadata,
      config: item.create.config,
      if_exists: 'do_nothing',
    });
  return keelRequest<{ run_id: string }>(
    connection,
    'POST',
    `/threads/${segment(item.threadId)}/runs`,
    {
      assistant_id: item.assistantId,
      input: { messages: [{ type: 'human', content: item.text }] },
      stream_mode: streamMode,
      stream_resumable: true,
      // Leaving the page never cancels the run: the page re-attaches when it comes back.
      on_disconnect: 'continue',
      ...(item.model === undefined ? {} : { config: { model: item.model } }),
      ...(item.checkpointId === undefined ? {} : { checkpoint: { checkpoint_id: item.checkpointId } }),
    },
    { 'idempotency-key': item.key },
  );
}
