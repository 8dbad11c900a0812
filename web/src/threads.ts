/** The threads the sidebar lists and the assistants a new thread may use. */
import type { Message } from '@langchain/langgraph-sdk';
import type { Connection } from './keel-api';
import { textOf } from './message-text';

export interface ThreadSummary {
  id: string;
  title: string;
  status: string;
  costUsd: number;
  createdAt: string;
}

/** The metadata key the page stores a thread's title under (its first message, shortened). */
export const titleKey = 'title';

export const titleOf = (text: string): string => {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
};

type Listed = Record<string, unknown> & {
  thread_id: string;
  status?: string;
  created_at?: string;
  metadata?: Record<string, unknown> | null;
};

/** A thread's spend: Keel's listing carries `cost_usd`; a full thread carries it in its summary. */
function costOf(thread: Listed): number {
  const summary = thread.summary as { cost_usd?: unknown } | undefined;
  const value = thread.cost_usd ?? summary?.cost_usd ?? 0;
  return typeof value === 'number' ? value : 0;
}

/** Titles read from threads' first messages (a thread made by the CLI or the API has none set). */
const firstMessageTitles = new Map<string, string>();

/**
 * A sub-agent's thread: `<parent>.<tool call id>`. The API leaves sub-agents out of searches
 * (decision 0401); this also keeps them out of the list from an API from before that.
 */
const childThread = /\.(toolu_|call_)[\w-]+$/;

/** Threads newest first, sub-agents' threads left out (they show inside their parent's cards). */
export async function searchThreads(connection: Connection): Promise<ThreadSummary[]> {
  const found = (await connection.client.threads.search({ limit: 100 })) as unknown as Listed[];
  // Visibility may list a thread once per workflow run (continue-as-new): the first is the newest.
  const seen = new Set<string>();
  return found
    .filter((thread) => !seen.has(thread.thread_id) && seen.add(thread.thread_id) !== undefined)
    .filter((thread) => thread.metadata?.keel_child_of === undefined && !childThread.test(thread.thread_id))
    .map((thread) => {
      const title = thread.metadata?.[titleKey] ?? thread.metadata?.name;
      return {
        id: thread.thread_id,
        title:
          typeof title === 'string' && title.trim() !== ''
            ? titleOf(title)
            : (firstMessageTitles.get(thread.thread_id) ?? ''),
        status: thread.status ?? 'idle',
        costUsd: costOf(thread),
        createdAt: thread.created_at ?? '',
      };
    })
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/**
 * Fills in the titles the listing lacks from each thread's first message, one thread at a time
 * (each once per page: a first message stays the first), calling `found` as each arrives.
 */
export async function titleUntitled(
  connection: Connection,
  threads: ThreadSummary[],
  found: (threadId: string, title: string) => void,
): Promise<void> {
  for (const thread of threads) {
    if (thread.title !== '') continue;
    const known = firstMessageTitles.get(thread.id);
    if (known !== undefined) {
      found(thread.id, known);
      continue;
    }
    try {
      const state = await connection.client.threads.getState<{ messages?: Message[] }>(thread.id);
      const first = (state.values as { messages?: Message[] } | null)?.messages?.find(
        (message) => message.type === 'human',
      );
      if (first === undefined) continue;
      const title = titleOf(textOf(first));
      firstMessageTitles.set(thread.id, title);
      found(thread.id, title);
    } catch {
      // Left as it is: the thread is listed by its id until it can be read.
    }
  }
}

export interface AssistantChoice {
  id: string;
  name: string;
}

/** Keel's default assistant: the thread as configured, deployment defaults for the rest. */
export const defaultAssistant = 'agent';

/** The assistants a new thread may use, the default first (it is what a new thread starts on). */
export async function searchAssistants(connection: Connection): Promise<AssistantChoice[]> {
  const found = await connection.client.assistants.search({ limit: 100 });
  return found
    .map((assistant) => ({
      id: assistant.assistant_id,
      name: assistant.name === '' || assistant.name === undefined ? assistant.assistant_id : assistant.name,
    }))
    .sort((a, b) => Number(b.id === defaultAssistant) - Number(a.id === defaultAssistant));
}
