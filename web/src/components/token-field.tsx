/** The API token, for an API started with KEEL_API_TOKENS; it stays in this browser. */
import { useId, useState } from 'react';

export function TokenField({
  token,
  needed,
  onSave,
}: {
  token: string;
  needed: boolean;
  onSave: (token: string) => void;
}) {
  const [draft, setDraft] = useState(token);
  const id = useId();
  return (
    <form
      className={`token-field${needed ? ' needed' : ''}`}
      onSubmit={(event) => {
        event.preventDefault();
        onSave(draft);
      }}
    >
      <label htmlFor={id}>API token</label>
      {needed && <p role="alert">This API asks for a token (KEEL_API_TOKENS).</p>}
      <div>
        <input
          id={id}
          type="password"
          autoComplete="off"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          aria-describedby={`${id}-hint`}
        />
        <button type="submit">Save</button>
      </div>
      <small id={`${id}-hint`}>Kept in this browser only.</small>
    </form>
  );
}
