/** What a new thread is made with: its assistant, its model and whether tools wait for a person. */
import type { AssistantChoice } from '../threads';
import type { NewThreadChoice } from '../use-thread-stream';

export interface NewThreadProps {
  assistants: AssistantChoice[];
  assistantId: string;
  onAssistant: (assistantId: string) => void;
  choice: NewThreadChoice;
  onChoice: (choice: NewThreadChoice) => void;
}

/** Models to suggest; any `provider:model` the worker can reach may be typed. */
const suggested = ['anthropic:claude-sonnet-4-5', 'openai:gpt-4.1', 'ollama:llama3.2', 'scripted:demo'];

export function NewThread({ assistants, assistantId, onAssistant, choice, onChoice }: NewThreadProps) {
  return (
    <div className="empty new-thread-form">
      <h2>New thread</h2>
      <label>
        Assistant
        <select value={assistantId} onChange={(event) => onAssistant(event.target.value)}>
          {assistants.map((assistant) => (
            <option key={assistant.id} value={assistant.id}>
              {assistant.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model
        <input
          value={choice.model}
          list="keel-models"
          placeholder="the assistant’s default"
          spellCheck={false}
          onChange={(event) => onChoice({ ...choice, model: event.target.value })}
        />
        <datalist id="keel-models">
          {suggested.map((model) => (
            <option key={model} value={model} />
          ))}
        </datalist>
      </label>
      <label>
        Approvals
        <select
          value={choice.approval}
          onChange={(event) =>
            onChoice({ ...choice, approval: event.target.value as NewThreadChoice['approval'] })
          }
        >
          <option value="">the deployment’s default</option>
          <option value="auto">run tools without asking</option>
          <option value="require">ask before sensitive tools</option>
        </select>
      </label>
    </div>
  );
}
