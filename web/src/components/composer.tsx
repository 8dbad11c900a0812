/** Where a person writes: Enter sends, Shift+Enter starts a new line; Stop while a run works. */
import { useId, useState } from 'react';

export interface ComposerProps {
  busy: boolean;
  disabled: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
}

export function Composer({ busy, disabled, onSend, onStop }: ComposerProps) {
  const [text, setText] = useState('');
  const id = useId();
  const send = () => {
    if (text.trim() === '' || disabled) return;
    onSend(text);
    setText('');
  };
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        Message
      </label>
      <textarea
        id={id}
        value={text}
        rows={2}
        placeholder="Write a message — try “run: ls -la” or “write: notes.md: hello”"
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      {busy ? (
        <button type="button" className="stop" onClick={onStop}>
          Stop
        </button>
      ) : null}
      <button type="submit" disabled={disabled || text.trim() === ''}>
        Send
      </button>
    </form>
  );
}
