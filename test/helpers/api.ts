/** An API process in miniature: the real Express app over a real client, on an ephemeral port. */
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { startApi, type RunningApi } from '../../api/server';
import type { KeelConfig } from '../../common/config';

export async function startTestApi(client: Client, config: KeelConfig): Promise<RunningApi> {
  return startApi({ client, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
}

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** Sends JSON (or a raw string body) and parses the JSON answer. */
export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (text === '' ? {} : JSON.parse(text)) as T,
  };
}

export const userInput = (content: string, extra: Record<string, unknown> = {}) => ({
  input: { messages: [{ role: 'user', content }] },
  ...extra,
});
