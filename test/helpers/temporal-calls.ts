/** Counting the Temporal calls a client makes, by method: what an API request costs Temporal. */
import type { Client } from '@temporalio/client';

/** Counts the Temporal calls made through `client`, by method, while `during` runs. */
export async function countCalls<T>(
  client: Client,
  during: () => Promise<T>,
): Promise<[T, Map<string, number>]> {
  // The connection's service is a plain object of one function per method (its namespace wrapper).
  const service = client.connection.workflowService as unknown as Record<string, unknown>;
  const originals = Object.entries(service).filter(
    (entry): entry is [string, (...args: unknown[]) => unknown] => typeof entry[1] === 'function',
  );
  const calls = new Map<string, number>();
  for (const [name, original] of originals)
    service[name] = (...args: unknown[]) => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return original(...args);
    };
  try {
    return [await during(), calls];
  } finally {
    for (const [name, original] of originals) service[name] = original;
  }
}
