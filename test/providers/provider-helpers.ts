/**
 * What the provider tests share: tool schemas, a canonical tool round trip, a request builder and
 * a failure catcher.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ModelRequest } from '../../activities/model/client';
import type { ToolSchema } from '../../common/tools';
import type { ModelMessage } from '../../common/transcript';

export const testTools: ToolSchema[] = [
  {
    name: 'bash',
    description: 'run',
    input_schema: { type: 'object', properties: { command: { type: 'string' } } },
  },
  {
    name: 'read_file',
    description: 'read',
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  },
];

/** The canonical transcript of one answered pair of tool calls, an error among them, and text after. */
export const toolRoundTrip: ModelMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'list and read' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'On it.' },
      { type: 'tool_use', id: 'toolu_A', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'toolu_B', name: 'read_file', input: { path: 'a.txt' } },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_A', content: 'a.txt\n' },
      { type: 'tool_result', tool_use_id: 'toolu_B', content: 'no such file', is_error: true },
      { type: 'text', text: 'and hurry' },
    ],
  },
];

export function modelRequest(model: string, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    system: 'You are a test.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    tools: testTools,
    maxTokens: 1024,
    signal: new AbortController().signal,
    ...overrides,
  };
}

export async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}
