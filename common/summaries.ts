/** One-line activity summaries, as the Temporal Web UI shows them on each activity. */
import type { ToolUseBlock } from './transcript';

const maxSummaryChars = 120;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxSummaryChars ? `${flat.slice(0, maxSummaryChars - 1)}…` : flat;
}

export function summarizeModelCall(model: string, turn: number, step: number): string {
  return oneLine(`model ${model} turn ${turn}${step > 1 ? ` step ${step}` : ''}`);
}

/** "bash: ls -la", "read_file: notes.md": the tool and the input that says most about the call. */
export function summarizeToolCall(use: ToolUseBlock): string {
  const input = use.input;
  const telling = ['command', 'path', 'task', 'query', 'url']
    .map((key) => input[key])
    .find((value) => typeof value === 'string');
  const detail = typeof telling === 'string' ? telling : JSON.stringify(input);
  return oneLine(`${use.name}: ${detail}`);
}

/**
 * The one line that names a thread in the Temporal Web UI: its title (metadata `title` or
 * `name`, as LangGraph's chat UIs set them), else its first message, else its id.
 */
export function summarizeThread(thread: {
  thread_id: string;
  metadata: Record<string, unknown>;
  first_message?: string | undefined;
}): string {
  const title = [thread.metadata.title, thread.metadata.name].find(
    (value): value is string => typeof value === 'string' && value.trim() !== '',
  );
  if (title !== undefined) return oneLine(title);
  if (thread.first_message !== undefined && thread.first_message.trim() !== '')
    return oneLine(thread.first_message);
  return `Keel thread ${thread.thread_id}`;
}
