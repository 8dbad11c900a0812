/** A sensitive tool call waiting for a person: approve, or deny with a reason, before the timeout. */
import { useEffect, useId, useState } from 'react';
import type { Decision } from '../approvals';
import { remaining } from '../format';
import type { DecisionActivity } from '../run-activity';

export interface ApprovalCardProps {
  decision: DecisionActivity;
  onDecide: (decision: Decision) => void;
}

export function ApprovalCard({ decision, onDecide }: ApprovalCardProps) {
  const [now, setNow] = useState(() => Date.now());
  const [reason, setReason] = useState('');
  const reasonId = useId();
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  const sending = decision.status === 'sending';
  const left = remaining(decision.expiresAt, now);
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
      <pre className="tool-args" aria-label="Arguments">
        {JSON.stringify(decision.args, null, 2)}
      </pre>
      <form
        className="approval-actions"
        onSubmit={(event) => {
          event.preventDefault();
          onDecide({ kind: 'deny', reason });
        }}
      >
        <button
          type="button"
          className="approve"
          disabled={sending}
          onClick={() => onDecide({ kind: 'approve' })}
        >
          Approve
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
