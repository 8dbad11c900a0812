/**
 * A sensitive tool call waiting for a person: approve (as asked, or with arguments edited as
 * JSON), or deny with a reason, before the timeout.
 */
import { useEffect, useId, useState } from 'react';
import { editedArguments, type Decision } from '../approvals';
import { remaining } from '../format';
import type { DecisionActivity } from '../run-activity';

export interface ApprovalCardProps {
  decision: DecisionActivity;
  onDecide: (decision: Decision) => void;
}

export function ApprovalCard({ decision, onDecide }: ApprovalCardProps) {
  const [now, setNow] = useState(() => Date.now());
  const [reason, setReason] = useState('');
  /** The arguments as a person is editing them; null while they are shown as asked. */
  const [edited, setEdited] = useState<string | null>(null);
  const reasonId = useId();
  const argsId = useId();
  const problemId = useId();
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  const sending = decision.status === 'sending';
  const left = remaining(decision.expiresAt, now);
  const asked = JSON.stringify(decision.args, null, 2);
  const parsed = edited === null ? null : editedArguments(edited);
  const problem = parsed !== null && 'problem' in parsed ? parsed.problem : null;
  const approve = () => {
    if (parsed === null) onDecide({ kind: 'approve' });
    else if ('args' in parsed) onDecide({ kind: 'approve', input: parsed.args });
  };
  return (
    <section className="approval-card" aria-label={`Approval for ${decision.tool}`}>
      <header>
        <strong>
          Allow <code>{decision.tool}</code>?
        </strong>
        <span className="countdown" aria-label="Time left to decide">
          {left === '0:00' ? 'timing out…' : `${left} left`}
        </span>
      </header>
      {edited === null ? (
        <pre className="tool-args" aria-label="Arguments">
          {asked}
        </pre>
      ) : (
        <>
          <label htmlFor={argsId} className="visually-hidden">
            Edited arguments
          </label>
          <textarea
            id={argsId}
            className="tool-args-edit"
            value={edited}
            rows={Math.min(12, asked.split('\n').length + 1)}
            spellCheck={false}
            aria-invalid={problem !== null}
            aria-describedby={problem === null ? undefined : problemId}
            onChange={(event) => setEdited(event.target.value)}
            disabled={sending}
          />
          {problem !== null && (
            <p id={problemId} className="notice notice-error" role="alert">
              {problem}
            </p>
          )}
        </>
      )}
      <form
        className="approval-actions"
        onSubmit={(event) => {
          event.preventDefault();
          onDecide({ kind: 'deny', reason });
        }}
      >
        <button type="button" className="approve" disabled={sending || problem !== null} onClick={approve}>
          {edited === null ? 'Approve' : 'Approve edited'}
        </button>
        <button type="button" disabled={sending} onClick={() => setEdited(edited === null ? asked : null)}>
          {edited === null ? 'Edit arguments' : 'Undo edits'}
        </button>
        <label htmlFor={reasonId} className="visually-hidden">
          Reason for denying
        </label>
        <input
          id={reasonId}
          value={reason}
          placeholder="Reason (optional)"
          onChange={(event) => setReason(event.target.value)}
          disabled={sending}
        />
        <button type="submit" className="deny" disabled={sending}>
          Deny
        </button>
      </form>
    </section>
  );
}
