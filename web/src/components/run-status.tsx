/** How the run stands: working, how it ended and why, what it cost, budgets, and errors. */
import { dollars, tokens } from '../format';
import type { Connection } from '../keel-api';
import type { BudgetNotice, Usage } from '../run-activity';
import { BudgetLine } from './budget-line';
import { BudgetStop } from './budget-stop';

/** A finished run as the page reports it. */
export interface RunOutcome {
  status: string;
  reason?: string | undefined;
  error?: string | undefined;
  usage?: Usage | undefined;
}

const reasons: Record<string, string> = {
  budget_exceeded: 'The thread reached its budget.',
  quota_exceeded: 'Your quota is used up.',
  awaiting_approval: 'Needs approval.',
  approval_timeout: 'A tool was not approved in time.',
  max_steps: 'The run reached its step limit.',
  max_tokens: 'The answer reached the model’s output limit.',
  refusal: 'The model refused to answer.',
  cancelled_by_user: 'Stopped.',
  interrupted: 'Interrupted by a newer message.',
  superseded: 'Interrupted by a newer message.',
  thread_busy: 'The thread was busy; the message was not added.',
  thread_closed: 'The thread is closed.',
  model_error: 'The model could not answer.',
};

/** Reasons whose words are completed by the run's error message. */
const explainedByError = new Set(['model_error', 'quota_exceeded']);

export function outcomeText(outcome: RunOutcome): string {
  if (outcome.status === 'completed')
    return outcome.reason === undefined ? 'Done.' : (reasons[outcome.reason] ?? `Done (${outcome.reason}).`);
  if (outcome.status === 'cancelled') return 'Stopped.';
  // Keel's own words for a known reason; its error message, which says what happened, where
  // those words alone would not (a model's failure: a missing key, a provider down).
  const why = outcome.reason === undefined ? undefined : reasons[outcome.reason];
  const error = outcome.error === undefined || outcome.error === '' ? undefined : outcome.error;
  if (why === undefined) return error ?? 'The run failed.';
  if (error === undefined || !explainedByError.has(outcome.reason ?? '')) return why;
  return `${why.replace(/\.$/, '')}: ${error.replace(/\.?$/, '.')}`;
}

export interface RunStatusProps {
  busy: boolean;
  reconnecting: boolean;
  outcome: RunOutcome | null;
  usage?: { run: Usage; thread: Usage } | undefined;
  budget?: BudgetNotice | undefined;
  problem: string | null;
  /** A tool call waits for a person's decision (the run is paused, nothing failed). */
  needsApproval: boolean;
  /** A message of this view's is on its way to the API: the last run's outcome is old news. */
  sending: boolean;
  connection: Connection;
  threadId: string | null;
}

/** A run stopped by the thread's budget: said by `BudgetStop`, with its control, and only there. */
export const isBudgetStop = (outcome: RunOutcome | null): boolean => outcome?.reason === 'budget_exceeded';

/** A run whose end the status line explains in full: Keel's notice in the thread would say it twice. */
export const isSaidByStatus = (outcome: RunOutcome | null): boolean =>
  isBudgetStop(outcome) || outcome?.reason === 'quota_exceeded';

/**
 * The notice's words, or undefined when the thread has no limit: then it was the run's share of
 * its owner's quota that refused the call, and the run's outcome says so (decision 0510).
 */
function budgetText({ kind, usage, limit }: BudgetNotice): string | undefined {
  const parts: string[] = [];
  if (limit.max_cost_usd !== undefined)
    parts.push(`${dollars(usage.cost_usd)} of ${dollars(limit.max_cost_usd)}`);
  if (limit.max_tokens !== undefined)
    parts.push(
      `${(usage.input_tokens + usage.output_tokens).toLocaleString('en')} of ${limit.max_tokens.toLocaleString('en')} tokens`,
    );
  if (parts.length === 0) return undefined;
  const spent = parts.join(', ');
  return kind === 'warning' ? `Budget warning: 80 % used (${spent}).` : `Budget reached (${spent}).`;
}

export function RunStatus(props: RunStatusProps) {
  const {
    busy,
    reconnecting,
    outcome,
    usage,
    budget,
    problem,
    needsApproval,
    sending,
    connection,
    threadId,
  } = props;
  const failed =
    !sending && outcome !== null && outcome.status !== 'completed' && outcome.status !== 'cancelled';
  const budgetStop = !busy && !sending && isBudgetStop(outcome) && threadId !== null;
  const budgetNotice = budget === undefined ? undefined : budgetText(budget);
  const line = reconnecting
    ? 'Reconnecting…'
    : needsApproval
      ? 'Needs approval.'
      : busy
        ? 'Working…'
        : sending
          ? 'Sending…'
          : outcome !== null
            ? outcomeText(outcome)
            : '';
  return (
    <div className="run-status">
      {/* A run stopped by the budget says so once, below, with the control to raise it. */}
      {budget !== undefined && budgetNotice !== undefined && !budgetStop && (
        <p className={`notice ${budget.kind === 'warning' ? 'notice-warning' : 'notice-error'}`} role="alert">
          {budgetNotice}
        </p>
      )}
      {problem !== null && (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      )}
      {budgetStop ? (
        <BudgetStop connection={connection} threadId={threadId} />
      ) : (
        <p
          className={`status-line${failed && !needsApproval ? ' failed' : ''}${needsApproval ? ' waiting' : ''}`}
          role="status"
          aria-live="polite"
        >
          {line}
        </p>
      )}
      {usage !== undefined && (
        <p className="usage" aria-label="Usage">
          This run: {tokens(usage.run)} · {dollars(usage.run.cost_usd)} — thread:{' '}
          {dollars(usage.thread.cost_usd)}
        </p>
      )}
      {/* Once a run is over; a budget stop says what was spent above, once. */}
      {!busy && !sending && !budgetStop && threadId !== null && (
        <BudgetLine
          connection={connection}
          threadId={threadId}
          at={`${outcome?.status ?? ''}:${usage?.thread.cost_usd ?? ''}`}
        />
      )}
    </div>
  );
}
