/**
 * The page's connection to Keel: LangGraph's SDK client for the Agent Protocol, plus plain
 * requests for Keel's own extensions (approvals), both carrying the browser's token.
 */
import { Client } from '@langchain/langgraph-sdk';

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

/** An answer in Keel's error shape, `{"error": {"type", "code", "message"}, "detail"}`. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string } | string;
  message?: string;
  detail?: string;
}

function problemOf(status: number, text: string): ApiProblem {
  try {
    const body = JSON.parse(text) as ErrorBody;
    if (typeof body.error === 'object')
      return new ApiProblem(status, body.error.code ?? 'error', body.error.message ?? text);
    return new ApiProblem(status, body.error ?? 'error', body.message ?? body.detail ?? text);
  } catch {
    return new ApiProblem(status, 'error', text === '' ? `the API answered ${status}` : text);
  }
}

/** A request to one of Keel's own endpoints, answered with its JSON or an `ApiProblem`. */
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
  if (!response.ok) throw problemOf(response.status, text);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** The HTTP status of a failed call, from the SDK or from `keelRequest`. */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof ApiProblem) return error.status;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** What went wrong, in a sentence a person can read: never a stack. */
export function readableError(error: unknown): string {
  if (error instanceof ApiProblem) return error.message;
  if (error instanceof TypeError || (error as { name?: string } | null)?.name === 'MaxReconnectAttemptsError')
    return 'The API cannot be reached. Is `npm start` still running?';
  const failed = error as { status?: number; text?: string; message?: string; error?: string } | null;
  if (typeof failed?.status === 'number' && typeof failed.text === 'string')
    return problemOf(failed.status, failed.text).message;
  if (typeof failed?.message === 'string' && failed.message !== '') return failed.message;
  return 'Something went wrong.';
}

/** `encodeURIComponent` for a path segment. */
export const segment = (value: string): string => encodeURIComponent(value);
