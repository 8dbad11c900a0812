/**
 * The `keel` commands' view of the HTTP API: JSON in and out, and any failure as one readable
 * error (the API's own message and code, or why the API could not be reached).
 */
import type { QuotaView } from '../common/quota';
import type { PendingApproval } from '../common/approvals';
import type { Run } from '../common/run';
import type { Thread } from '../common/thread';
import type { Message } from '../common/transcript';
import { ApiConnectionError, apiCallErrorOf } from '../common/api-call-errors';

export class KeelApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, {
      ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' }),
    });
    const text = await response.text();
    if (!response.ok)
      throw apiCallErrorOf({ status: response.status, statusText: response.statusText, text });
    if (response.headers.get('content-type')?.includes('application/json') !== true) return text as T;
    return JSON.parse(text) as T;
  }

  /**
   * Opens an SSE stream, after the durable event `lastEventId` when given. Answers other than a
   * stream throw like `request` does; the caller reads (and cancels) the body.
   */
  async openStream(path: string, lastEventId: string | undefined, signal: AbortSignal): Promise<Response> {
    const response = await this.send('GET', path, {
      accept: 'text/event-stream',
      ...(lastEventId === undefined ? {} : { lastEventId }),
      signal,
    });
    if (!response.ok || response.headers.get('content-type')?.startsWith('text/event-stream') !== true)
      throw apiCallErrorOf({
        status: response.status,
        statusText: response.statusText,
        text: await response.text(),
      });
    return response;
  }

  private async send(
    method: string,
    path: string,
    options: {
      body?: string;
      contentType?: string;
      accept?: string;
      lastEventId?: string;
      signal?: AbortSignal;
    },
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    if (options.accept !== undefined) headers.accept = options.accept;
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    try {
      return await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: options.body }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      throw new ApiConnectionError(
        `cannot reach the Keel API at ${this.baseUrl}; is it running (keel up)?`,
        undefined,
        undefined,
        { cause: error },
      );
    }
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

  /** The canonical transcript (the thread's state shows LangChain's view of it). */
  async messages(threadId: string): Promise<Message[]> {
    const exported = await this.request<{ messages: Message[] }>(
      'GET',
      `/threads/${encodeURIComponent(threadId)}/export?format=json`,
    );
    return exported.messages;
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

  cancelRun(threadId: string, runId: string): Promise<Run> {
    return this.request(
      'POST',
      `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/cancel`,
      { reason: 'stopped from keel chat' },
    );
  }

  /** The caller's owner quota (`GET /quota`, decision 0440). */
  getQuota(): Promise<QuotaView> {
    return this.request('GET', '/quota');
  }

  updateLimits(threadId: string, limits: { max_tokens?: number; max_cost_usd?: number }): Promise<Thread> {
    return this.request('POST', `/threads/${encodeURIComponent(threadId)}/limits`, limits);
  }
}
