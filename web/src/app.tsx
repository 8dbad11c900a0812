/** The page: the threads in a sidebar, the chosen thread (named by the URL) beside it. */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { ThreadView } from './components/thread-view';
import { ThreadList } from './components/thread-list';
import { TokenField } from './components/token-field';
import { useDelivery } from './delivery';
import { connect, readableError, statusOf } from './keel-api';
import { useReachable } from './reachable';
import { useThreadRoute } from './route';
import {
  searchAssistants,
  searchThreads,
  titleUntitled,
  type AssistantChoice,
  type ThreadSummary,
} from './threads';
import { useToken } from './token';

export function App() {
  const [token, saveToken] = useToken();
  const connection = useMemo(() => connect(token), [token]);
  const route = useThreadRoute();
  const [threads, setThreads] = useState<ThreadSummary[]>([]);
  const [assistants, setAssistants] = useState<AssistantChoice[] | null>(null);
  const [needsToken, setNeedsToken] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [attach, setAttach] = useState(0);
  const [menuOpen, setMenuOpen] = useState(false);
  const reachable = useReachable(connection);
  const unauthorized = useCallback(() => setNeedsToken(true), []);
  useDelivery(connection, reachable, unauthorized);

  const refresh = useCallback(() => {
    searchThreads(connection).then(
      (found) => {
        setThreads(found);
        void titleUntitled(connection, found, (threadId, title) =>
          setThreads((listed) =>
            listed.map((thread) => (thread.id === threadId ? { ...thread, title } : thread)),
          ),
        );
        setNeedsToken(false);
        setProblem(null);
      },
      // The list shown stays as it was: a failed refresh never empties it.
      (error: unknown) => {
        if (statusOf(error) === 401) setNeedsToken(true);
        else if (statusOf(error) !== undefined) setProblem(readableError(error));
      },
    );
  }, [connection]);

  useEffect(() => {
    refresh();
    searchAssistants(connection).then(setAssistants, () => setAssistants([]));
  }, [connection, refresh]);

  // Back after the API was away: what the list shows may have moved on meanwhile.
  useEffect(() => {
    if (reachable) refresh();
  }, [reachable, refresh]);

  // Back from another tab or window: other clients may have moved threads on meanwhile.
  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === 'visible') refresh();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, [refresh]);

  const open = (threadId: string | null) => {
    setMenuOpen(false);
    route.open(threadId);
  };

  return (
    <div className={`app${menuOpen ? ' menu-open' : ''}`}>
      <header className="top-bar">
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen((value) => !value)}
        >
          Threads
        </button>
        <h1>Keel</h1>
      </header>
      <aside id="sidebar" className="sidebar">
        <ThreadList threads={threads} current={route.threadId} onOpen={open} />
        {problem !== null && reachable && (
          <p className="notice notice-error" role="alert">
            {problem}
          </p>
        )}
        <TokenField token={token} needed={needsToken} onSave={saveToken} />
      </aside>
      <main className="main">
        {!reachable && (
          <p className="notice notice-error offline" role="alert">
            The API cannot be reached. What you send is kept here and goes out as soon as it answers.
          </p>
        )}
        {assistants !== null && (
          <ThreadView
            key={`${route.visit}-${attach}-${token}`}
            connection={connection}
            threadId={route.threadId}
            assistants={assistants}
            onCreated={(threadId) => {
              route.created(threadId);
              refresh();
            }}
            onChanged={() => {
              refresh();
              // Thread listings come from Temporal's visibility, which follows a moment later.
              window.setTimeout(refresh, 2_000);
            }}
            onReattach={() => setAttach((value) => value + 1)}
            onUnauthorized={unauthorized}
            reachable={reachable}
          />
        )}
      </main>
    </div>
  );
}
