/**
 * A thread stopped by its budget, said once: what it spent of which limit, and a control to raise
 * that limit (`POST /threads/{id}/limits`), after which the next message goes on.
 */
import { useEffect, useId, useState } from 'react';
import { dollars } from '../format';
import { keelRequest, readableError, segment, type Connection } from '../keel-api';
import type { Usage } from '../run-activity';

interface ThreadBudget {
  config?: { max_cost_usd?: number; max_tokens?: number };
  usage?: Usage;
}

type Limit =
  { kind: 'cost'; spent: number; limit: number } | { kind: 'tokens'; spent: number; limit: number };

/** The limit the thread reached: its cost limit when it has one spent, else its token limit. */
function limitOf(thread: ThreadBudget): Limit | undefined {
  const usage = thread.usage;
  const cost = thread.config?.max_cost_usd;
  const tokens = thread.config?.max_tokens;
  if (usage === undefined) return undefined;
  const used = usage.input_tokens + usage.output_tokens;
  if (cost !== undefined && (tokens === undefined || usage.cost_usd >= cost))
    return { kind: 'cost', spent: usage.cost_usd, limit: cost };
  if (tokens !== undefined) return { kind: 'tokens', spent: used, limit: tokens };
  return undefined;
}

const shown = (limit: Limit, value: number): string =>
  limit.kind === 'cost' ? dollars(value) : `${value.toLocaleString('en')} tokens`;

/** A round figure comfortably above what was spent: twice the larger of spent and limit. */
function suggestion(limit: Limit): number {
  const base = 2 * Math.max(limit.spent, limit.limit);
  if (limit.kind === 'tokens') return Math.ceil(base / 1000) * 1000;
  const step = base < 0.1 ? 0.01 : base < 10 ? 0.5 : 5;
  return Math.ceil(base / step) * step;
}

export function BudgetStop({ connection, threadId }: { connection: Connection; threadId: string }) {
  const [limit, setLimit] = useState<Limit | undefined>();
  const [draft, setDraft] = useState('');
  const [raised, setRaised] = useState<number | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const id = useId();
  useEffect(() => {
    keelRequest<ThreadBudget>(connection, 'GET', `/threads/${segment(threadId)}`).then(
      (thread) => {
        const found = limitOf(thread);
        setLimit(found);
        if (found !== undefined) setDraft(String(suggestion(found)));
      },
      (error: unknown) => setProblem(readableError(error)),
    );
  }, [connection, threadId]);

  const raise = () => {
    const value = Number(draft);
    if (limit === undefined || !Number.isFinite(value) || value <= limit.spent) {
      setProblem(
        `Pick a limit above what was spent${limit === undefined ? '' : ` (${shown(limit, limit.spent)})`}.`,
      );
      return;
    }
    const body = limit.kind === 'cost' ? { max_cost_usd: value } : { max_tokens: Math.round(value) };
    setProblem(undefined);
    keelRequest(connection, 'POST', `/threads/${segment(threadId)}/limits`, body).then(
      () => setRaised(value),
      (error: unknown) => setProblem(readableError(error)),
    );
  };

  const sentence =
    raised !== undefined && limit !== undefined
      ? `The limit is now ${shown(limit, raised)}: send a message to go on.`
      : limit === undefined
        ? 'The thread reached its budget.'
        : `Budget reached: this thread spent ${shown(limit, limit.spent)} of its ${shown(limit, limit.limit)} limit.`;
  return (
    <div className="budget-stop">
      <p className={`status-line${raised === undefined ? ' failed' : ''}`} role="status" aria-live="polite">
        {sentence}
      </p>
      {limit !== undefined && raised === undefined && (
        <form
          className="budget-raise"
          onSubmit={(event) => {
            event.preventDefault();
            raise();
          }}
        >
          <label htmlFor={id}>{limit.kind === 'cost' ? 'New limit in dollars' : 'New limit in tokens'}</label>
          <input
            id={id}
            type="number"
            inputMode="decimal"
            min={0}
            step="any"
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
          />
          <button type="submit">Raise limit</button>
        </form>
      )}
      {problem !== undefined && (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
