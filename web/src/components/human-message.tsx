/** A person's message, which they may edit and send again: the thread goes on from before it. */
import { useId, useState } from 'react';

export interface HumanMessageProps {
  text: string;
  /** Absent while a run works, or when there is no checkpoint to go on from. */
  onEdit?: ((text: string) => void) | undefined;
}

export function HumanMessage({ text, onEdit }: HumanMessageProps) {
  const [draft, setDraft] = useState<string | null>(null);
  const id = useId();
  if (draft === null || onEdit === undefined)
    return (
      <article className="message human" aria-label="You">
        <p>{text}</p>
        {onEdit !== undefined && (
          <button type="button" className="edit" aria-label="Edit message" onClick={() => setDraft(text)}>
            Edit
          </button>
        )}
      </article>
    );
  const save = () => {
    if (draft.trim() === '') return;
    onEdit(draft);
    setDraft(null);
  };
  return (
    <form
      className="message human editing"
      aria-label="Edit your message"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        Edited message
      </label>
      <textarea
        id={id}
        value={draft}
        rows={3}
        autoFocus
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') setDraft(null);
        }}
      />
      <div className="edit-actions">
        <button type="button" onClick={() => setDraft(null)}>
          Cancel
        </button>
        <button type="submit" disabled={draft.trim() === ''}>
          Send edited
        </button>
      </div>
    </form>
  );
}
