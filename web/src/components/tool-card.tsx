/**
 * A tool call as a card: its name, arguments (a `bash` call as `$ command`), result and state; a
 * sub-agent's thread nested in it. Results are text, never markup.
 */
import type { Message } from '@langchain/langgraph-sdk';
import { useState } from 'react';
import type { Connection } from '../keel-api';
import { readableError } from '../keel-api';
import type { ToolStatus } from '../run-activity';
import { MessageList } from './message-list';

export type CardStatus = ToolStatus | 'waiting';

const statusLabel: Record<CardStatus, string> = {
  waiting: 'waiting',
  running: 'running',
  ok: 'ok',
  error: 'error',
};

export interface ToolCardProps {
  name: string;
  args: Record<string, unknown>;
  status: CardStatus;
  result?: string | undefined;
  /** The sub-agent's thread, for a `spawn_agent` call. */
  child?: { threadId: string; status: string } | undefined;
  connection: Connection;
}

export function ToolCard({ name, args, status, result, child, connection }: ToolCardProps) {
  // A long output scrolls inside its card rather than pushing the conversation away.
  const long = result !== undefined && result.length > 600;
  return (
    <section className={`tool-card tool-${status}`} aria-label={`Tool ${name}`} data-status={status}>
      <header>
        <span className="tool-name">{name}</span>
        <span className={`badge badge-${status}`}>{statusLabel[status]}</span>
      </header>
      {typeof args.command === 'string' && name === 'bash' ? (
        <pre className="tool-args tool-command" aria-label="Command">
          $ {args.command}
        </pre>
      ) : (
        <pre className="tool-args" aria-label="Arguments">
          {JSON.stringify(args, null, 2)}
        </pre>
      )}
      {result !== undefined && (
        <pre
          className={`tool-result${long ? ' long' : ''}`}
          aria-label="Result"
          tabIndex={long ? 0 : undefined}
        >
          {result}
        </pre>
      )}
      {child !== undefined && <ChildCard {...child} connection={connection} />}
    </section>
  );
}

/** A sub-agent: its own thread, read when the card is opened. */
function ChildCard({
  threadId,
  status,
  connection,
}: {
  threadId: string;
  status: string;
  connection: Connection;
}) {
  const [messages, setMessages] = useState<Message[] | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const load = () => {
    connection.client.threads
      .getState<{ messages?: Message[] }>(threadId)
      .then((state) => setMessages(state.values.messages ?? []))
      .catch((error: unknown) => setProblem(readableError(error)));
  };
  return (
    <details
      className="child-card"
      onToggle={(event) => {
        if ((event.target as HTMLDetailsElement).open) load();
      }}
    >
      <summary>
        Sub-agent <code>{threadId}</code> {status === '' ? '' : `· ${status}`}
      </summary>
      {problem !== undefined && <p className="problem">{problem}</p>}
      {messages !== undefined && (
        <MessageList messages={messages} connection={connection} threadId={threadId} />
      )}
    </details>
  );
}
