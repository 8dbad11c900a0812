/**
 * The page's connection to Keel: LangGraph's SDK client for the Agent Protocol, plus plain
 * requests for Keel's own extensions (approvals), both carrying the browser's token.
 */
import { Client } from '@langchain/langgraph-sdk';
import { ApiCallError, apiCallErrorOf } from '../../common/api-call-errors';

export interface Connection {
  client: Client;
  /** Where the API is: the page is served by it, so its own origin. */
  baseUrl: string;
  headers: Record<string, string>;
}

export function connect(token: string): Connection {
  const baseUrl = window.location.origin;
  const headers: Record<string, string> = token === '' ? {} : { 'x-api-key': token };
  // `apiKey: null` keeps the SDK from looking for a key elsewhere; the token travels as a header.
  const client = new Client({ apiUrl: baseUrl, apiKey: null, defaultHeaders: headers });
  return { client, baseUrl, headers };
}

/** A request to one of Keel's own endpoints, answered with its JSON or an `ApiCallError` of its status family. */
export async function keelRequest<T>(
  connection: Connection,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const init: RequestInit = { method, headers: { ...connection.headers, ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(`${connection.baseUrl}${path}`, init);
  const text = await response.text();
  if (!response.ok) throw apiCallErrorOf({ status: response.status, statusText: response.statusText, text });
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** The HTTP status of a failed call, from the SDK or from `keelRequest`. */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof ApiCallError) return error.status;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** What went wrong, in a sentence a person can read: never a stack. */
export function readableError(error: unknown): string {
  if (error instanceof ApiCallError) return error.detail;
  if (error instanceof TypeError || (error as { name?: string } | null)?.name === 'MaxReconnectAttemptsError')
    return 'The API cannot be reached. Is `npm start` still running?';
  const failed = error as { status?: number; text?: string; message?: string; error?: string } | null;
  if (typeof failed?.status === 'number' && typeof failed.text === 'string')
    return apiCallErrorOf({ status: failed.status, text: failed.text }).detail;
  if (typeof failed?.message === 'string' && failed.message !== '') return failed.message;
  return 'Something went wrong.';
}

/** `encodeURIComponent` for a path segment. */
export const segment = (value: string): string => encodeURIComponent(value);
