/** A message the API has not taken yet: kept on screen, with what holds it up and Retry. */
import { outbox, type Outgoing } from '../outbox';

const said: Record<Outgoing['state'], string> = {
  sending: 'Sending…',
  waiting: 'Not sent yet: the API cannot be reached. It goes out as soon as the API answers.',
  failed: 'Not sent.',
  taken: 'Sent.',
};

export function PendingMessage({ item }: { item: Outgoing }) {
  const problem = item.state === 'failed' && item.problem !== undefined ? ` ${item.problem}` : '';
  // The API answered "later" (a concurrency quota, decision 0440): its words, not "cannot be reached".
  const waitingFor =
    item.state === 'waiting' && item.problem !== undefined && item.problem !== 'The API cannot be reached.'
      ? `Not sent yet: ${item.problem} It goes out as soon as the API takes it.`
      : undefined;
  return (
    <article
      className={`message human pending pending-${item.state}`}
      aria-label="Your message, not yet in the thread"
    >
      <p>{item.text}</p>
      <footer className="pending-state" role="status">
        {waitingFor ?? said[item.state]}
        {problem}
        {(item.state === 'waiting' || item.state === 'failed') && (
          <>
            {' '}
            <button type="button" onClick={() => outbox.update(item.key, { state: 'sending' })}>
              Retry
            </button>
          </>
        )}
        {item.state === 'failed' && (
          <>
            {' '}
            <button type="button" onClick={() => outbox.remove(item.key)}>
              Discard
            </button>
          </>
        )}
      </footer>
    </article>
  );
}
