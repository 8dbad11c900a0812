/**
 * The `keel` commands' view of the HTTP API: JSON in and out, and any failure as one readable
 * error (the API's own message and code, or why the API could not be reached).
 */
import type { PendingApproval } from '../common/approvals';
import type { Run } from '../common/run';
import type { Thread } from '../common/thread';
import type { Message } from '../common/transcript';

export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

export class KeelApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiCallError(`cannot reach the Keel API at ${this.baseUrl}; is it running (keel up)?`);
    }
    const text = await response.text();
    if (!response.ok) {
      let parsed: ErrorBody = {};
      try {
        parsed = JSON.parse(text) as ErrorBody;
      } catch {
        // Not our error shape (a proxy, say): the status line is all there is.
      }
      const message = parsed.error?.message ?? `${response.status} ${response.statusText}`;
      const code = parsed.error?.code;
      throw new ApiCallError(
        `${message} (HTTP ${response.status}${code === undefined ? '' : ` ${code}`})`,
        response.status,
        code,
      );
    }
    if (response.headers.get('content-type')?.includes('application/json') !== true) return text as T;
    return JSON.parse(text) as T;
  }

  getThread(threadId: string): Promise<Thread> {
    return this.request('GET', `/threads/${encodeURIComponent(threadId)}`);
  }

  createThread(body: Record<string, unknown>): Promise<Thread> {
    return this.request('POST', '/threads', body);
  }

  createRun(threadId: string, text: string, model: string | undefined): Promise<Run> {
    return this.request('POST', `/threads/${encodeURIComponent(threadId)}/runs`, {
      input: { messages: [{ role: 'user', content: text }] },
      ...(model === undefined ? {} : { config: { model } }),
    });
  }

  getRun(threadId: string, runId: string): Promise<Run> {
    return this.request('GET', `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}`);
  }

  listRuns(threadId: string, limit = 20): Promise<Run[]> {
    return this.request('GET', `/threads/${encodeURIComponent(threadId)}/runs?limit=${limit}`);
  }

  async messages(threadId: string): Promise<Message[]> {
    const state = await this.request<{ values: { messages: Message[] } }>(
      'GET',
      `/threads/${encodeURIComponent(threadId)}/state`,
    );
    return state.values.messages;
  }

  approvals(threadId: string): Promise<PendingApproval[]> {
    return this.request('GET', `/threads/${encodeURIComponent(threadId)}/approvals`);
  }

  decide(
    threadId: string,
    approvalId: string,
    decision: 'approve' | 'deny',
    reason?: string,
  ): Promise<unknown> {
    return this.request(
      'POST',
      `/threads/${encodeURIComponent(threadId)}/approvals/${encodeURIComponent(approvalId)}`,
      { decision, ...(reason === undefined ? {} : { reason }) },
    );
  }

  updateLimits(threadId: string, limits: { max_tokens?: number; max_cost_usd?: number }): Promise<Thread> {
    return this.request('POST', `/threads/${encodeURIComponent(threadId)}/limits`, limits);
  }
}
