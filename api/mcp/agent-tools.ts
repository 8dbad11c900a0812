/**
 * Each assistant the caller can see is one MCP tool (decision 0430): named after the assistant
 * when its name is a valid, unique tool name, else after its id; described by its description;
 * its input is the message for a turn and, optionally, the thread to run it on.
 */
import type { Assistant } from '../../common/assistants';
import { limits } from '../../common/limits';

/** MCP's tool-name rule (2025-11-25): 1–128 of letters, digits, `_`, `-` and `.`. */
const toolNamePattern = /^[A-Za-z0-9_.-]{1,128}$/;

export const agentInputSchema = {
  type: 'object' as const,
  properties: {
    message: {
      type: 'string',
      minLength: 1,
      maxLength: limits.maxInputChars,
      description: 'What to ask the agent: one turn of the conversation',
    },
    thread_id: {
      type: 'string',
      description:
        'Continue this thread (created when it does not exist); without it each call starts a new thread. The result names the thread in _meta["keel/thread_id"]',
    },
  },
  required: ['message'],
};

export interface AgentTool {
  name: string;
  assistant: Assistant;
}

/** The tools for `assistants`, in their order; names made unique as the module says. */
export function agentTools(assistants: readonly Assistant[]): AgentTool[] {
  const counts = new Map<string, number>();
  for (const { name } of assistants) counts.set(name, (counts.get(name) ?? 0) + 1);
  const ids = new Set(assistants.map(({ assistant_id }) => assistant_id));
  return assistants.map((assistant) => {
    const { name, assistant_id } = assistant;
    const own =
      toolNamePattern.test(name) && counts.get(name) === 1 && (name === assistant_id || !ids.has(name));
    return { name: own ? name : assistant_id, assistant };
  });
}

/** A tool as `tools/list` shows it. */
export function toolDefinition({ name, assistant }: AgentTool) {
  const description =
    assistant.description ?? `Keel agent ${assistant.name} (assistant ${assistant.assistant_id})`;
  return {
    name,
    title: assistant.name,
    description: `${description}. Runs one durable turn and answers the agent's final message.`,
    inputSchema: agentInputSchema,
    // The caller chooses: a task to poll, or a call that waits (decision 0430).
    execution: { taskSupport: 'optional' as const },
    _meta: { 'keel/assistant_id': assistant.assistant_id },
  };
}
