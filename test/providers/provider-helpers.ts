/** What the provider tests share: tool schemas, a request builder and a failure catcher. */
import { ApplicationFailure } from '@temporalio/common';
import type { ModelRequest } from '../../activities/model/client';
import type { ToolSchema } from '../../common/tools';

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
