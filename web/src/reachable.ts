/**
 * Whether the API answers: `/ok` asked every few seconds, so the page says it cannot reach the
 * API within seconds of it going, not at the next thing a person does.
 */
import { useEffect, useState } from 'react';
import type { Connection } from './keel-api';

const everyMs = 2_500;
const patienceMs = 2_000;

export function useReachable(connection: Connection): boolean {
  const [reachable, setReachable] = useState(true);
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    const probe = async () => {
      let answered: boolean;
      try {
        // Any HTTP answer will do: the API is there (a 401 is the token's business, said elsewhere).
        await fetch(`${connection.baseUrl}/ok`, {
          headers: connection.headers,
          cache: 'no-store',
          signal: AbortSignal.timeout(patienceMs),
        });
        answered = true;
      } catch {
        answered = false;
      }
      if (stopped) return;
      setReachable(answered);
      timer = window.setTimeout(() => void probe(), everyMs);
    };
    void probe();
    return () => {
      stopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [connection]);
  return reachable;
}
