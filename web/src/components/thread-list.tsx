/** The sidebar: threads newest first with title, status and cost; a link names each. */
import { dollars } from '../format';
import { threadHref } from '../route';
import type { ThreadSummary } from '../threads';

/** LangGraph's thread statuses as a person reads them: an interrupt is a question, not a fault. */
const statusWords: Record<string, string> = { interrupted: 'needs approval', busy: 'working' };

export interface ThreadListProps {
  threads: ThreadSummary[];
  current: string | null;
  onOpen: (threadId: string | null) => void;
}

export function ThreadList({ threads, current, onOpen }: ThreadListProps) {
  return (
    <nav className="thread-list" aria-label="Threads">
      <button type="button" className="new-thread" onClick={() => onOpen(null)}>
        New thread
      </button>
      <ul>
        {threads.map((thread) => (
          <li key={thread.id}>
            <a
              href={threadHref(thread.id)}
              aria-current={thread.id === current ? 'page' : undefined}
              onClick={(event) => {
                if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
                event.preventDefault();
                onOpen(thread.id);
              }}
            >
              <span className="thread-title">{thread.title === '' ? thread.id : thread.title}</span>
              <span className="thread-meta">
                <span className={`badge badge-${thread.status}`}>
                  {statusWords[thread.status] ?? thread.status}
                </span>{' '}
                {dollars(thread.costUsd)}
              </span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
