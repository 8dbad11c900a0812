/** The thread the page shows is named by the URL (`/?thread=<id>`), so reload and links reopen it. */
import { useCallback, useEffect, useState } from 'react';

const threadOfLocation = (): string | null => new URLSearchParams(window.location.search).get('thread');

export const threadHref = (threadId: string | null): string =>
  threadId === null ? window.location.pathname : `?thread=${encodeURIComponent(threadId)}`;

export interface ThreadRoute {
  threadId: string | null;
  /** Bumped whenever a person goes somewhere (not when a new thread gets its id). */
  visit: number;
  open(threadId: string | null): void;
  /** The thread the page just created: named in the URL without leaving its view. */
  created(threadId: string): void;
}

export function useThreadRoute(): ThreadRoute {
  const [state, setState] = useState(() => ({ threadId: threadOfLocation(), visit: 0 }));
  useEffect(() => {
    const onPop = () => setState((previous) => ({ threadId: threadOfLocation(), visit: previous.visit + 1 }));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const open = useCallback((threadId: string | null) => {
    window.history.pushState(null, '', threadHref(threadId));
    setState((previous) => ({ threadId, visit: previous.visit + 1 }));
  }, []);
  const created = useCallback((threadId: string) => {
    window.history.pushState(null, '', threadHref(threadId));
    setState((previous) => ({ ...previous, threadId }));
  }, []);
  return { ...state, open, created };
}
