/**
 * A tool call as a card: its name, arguments (a `bash` call as `$ command`), result and state;
 * what the caller nests in it (a sub-agent's thread, from the message list). Results are text,
 * never markup.
 */
import type { ReactNode } from 'react';
import type { ToolStatus } from '../run-activity';

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
  /** Shown inside the card, under the result: a `spawn_agent` call's sub-agent thread. */
  children?: ReactNode;
}

export function ToolCard({ name, args, status, result, children }: ToolCardProps) {
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
      {children}
    </section>
  );
}
