/** Approvals, limits and the thread directory (search, export, delete, clean-up) over HTTP, on the real dev server. */
import { randomUUID } from 'node:crypto';
import type { PendingApproval } from '../../common/approvals';
import type { Run } from '../../common/run';
import type { Thread } from '../../common/thread';
import { apiHarness, call, userInput } from '../helpers/api';
import { eventually } from '../helpers/temporal';

describe('approvals, limits and thread search over HTTP', () => {
  const harness = apiHarness(() => ({ KEEL_APPROVAL: 'require' }));
  let base: string;
  beforeAll(() => {
    base = harness.base;
  });

  const newThread = async (body: Record<string, unknown> = {}): Promise<string> => {
    const response = await call<Thread>(base, 'POST', '/threads', body);
    expect(response.status).toBe(200);
    return response.body.thread_id;
  };
  const waitRun = async (threadId: string, text: string) => {
    const response = await call(base, 'POST', `/threads/${threadId}/runs/wait?timeout_s=30`, userInput(text));
    expect(response.status).toBe(200);
    return response;
  };
  const approvalsOf = (threadId: string, count: number) =>
    eventually(async () => {
      const response = await call<PendingApproval[]>(base, 'GET', `/threads/${threadId}/approvals`);
      return response.body.length === count ? response.body : undefined;
    });

  it('lists a pending approval, decides it, and answers 409 for a decided id and 404 for an unknown one', async () => {
    const threadId = await newThread();
    const created = await call<Thread>(base, 'GET', `/threads/${threadId}`);
    expect(created.body.config).toMatchObject({ approval: 'require', approval_timeout_s: 300 });
    const run = await call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput('run: echo via-http'));
    const [approval] = await approvalsOf(threadId, 1);
    expect(approval).toMatchObject({
      tool: 'bash',
      run_id: run.body.run_id,
      input: { command: 'echo via-http' },
    });
    expect(
      (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${run.body.run_id}`)).body.status_reason,
    ).toBe('awaiting_approval');
    expect((await call<Thread>(base, 'GET', `/threads/${threadId}`)).body.status).toBe('interrupted');

    const bad = await call(base, 'POST', `/threads/${threadId}/approvals/${approval!.approval_id}`, {
      decision: 'maybe',
    });
    expect(bad.status).toBe(422);
    const decided = await call(base, 'POST', `/threads/${threadId}/approvals/${approval!.approval_id}`, {
      decision: 'approve',
    });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ approval_id: approval!.approval_id, decision: 'approve' });
    const again = await call<{ error: { code: string } }>(
      base,
      'POST',
      `/threads/${threadId}/approvals/${approval!.approval_id}`,
      { decision: 'deny' },
    );
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('approval_not_pending');
    // Issue 13: an id that was never an approval is unknown (404), not "not pending" (409).
    const unknown = await call<{ error: { code: string; message: string } }>(
      base,
      'POST',
      `/threads/${threadId}/approvals/nope`,
      {
        decision: 'approve',
      },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('approval_not_found');
    expect(unknown.body.error.message).toContain(`approval nope not found on thread ${threadId}`);
    const unreachedStep = await call<{ error: { code: string } }>(
      base,
      'POST',
      `/threads/${threadId}/approvals/${run.body.run_id}.99.1`,
      { decision: 'approve' },
    );
    expect(unreachedStep.status).toBe(404);
    const malformed = await call(base, 'POST', `/threads/${threadId}/approvals/${'x'.repeat(300)}`, {
      decision: 'approve',
    });
    expect(malformed.status).toBe(404);
    const joined = await call(base, 'GET', `/threads/${threadId}/runs/${run.body.run_id}/join?timeout_s=30`);
    expect(joined.status).toBe(200);
    expect(JSON.stringify(joined.body)).toContain('via-http');
    expect((await call(base, 'GET', `/threads/missing-${randomUUID()}/approvals`)).status).toBe(404);
  });

  it('applies per-tool rules given on create: allow runs without asking, deny never runs', async () => {
    const threadId = await newThread({ config: { tool_rules: { bash: 'allow', delete_file: 'deny' } } });
    const response = await waitRun(threadId, 'run: echo allowed\ndelete: x.txt');
    const text = JSON.stringify(response.body);
    expect(text).toContain('allowed');
    expect(text).toContain('denied by this thread');
    const invalid = await call(base, 'POST', '/threads', { config: { tool_rules: { bash: 'sometimes' } } });
    expect(invalid.status).toBe(422);
  });

  it('shows usage and the usage summary on the thread and runs, and changes limits', async () => {
    // scripted:metered: the one offline model with a price, so the cost is not 0.
    const threadId = await newThread({
      config: { max_tokens: 100_000, max_cost_usd: 5, model: 'scripted:metered' },
    });
    await waitRun(threadId, 'hello');
    const thread = (await call<Thread>(base, 'GET', `/threads/${threadId}`)).body;
    expect(thread.usage.cost_usd).toBeGreaterThan(0);
    expect(thread.summary).toMatchObject({ runs: 1, steps: 1, tokens: expect.any(Number) });
    expect(thread.summary.tokens).toBeGreaterThan(0);
    const [run] = (await call<Run[]>(base, 'GET', `/threads/${threadId}/runs`)).body;
    expect(run!.usage.cost_usd).toBe(thread.usage.cost_usd);
    expect(run!.summary).toEqual(thread.summary);

    const lowered = await call<Thread>(base, 'POST', `/threads/${threadId}/limits`, {
      max_tokens: 1,
      max_cost_usd: null,
    });
    expect(lowered.status).toBe(200);
    expect(lowered.body.config.max_tokens).toBe(1);
    expect(lowered.body.config.max_cost_usd).toBeUndefined();
    const stopped = await call(
      base,
      'POST',
      `/threads/${threadId}/runs/wait?timeout_s=30`,
      userInput('again'),
    );
    expect(stopped.body).toMatchObject({ __error__: { error: 'BudgetExceeded' } });
    expect((await call(base, 'POST', `/threads/${threadId}/limits`, {})).status).toBe(422);
    expect((await call(base, 'POST', `/threads/${threadId}/limits`, { max_tokens: -5 })).status).toBe(422);
  });

  it('exports a transcript as JSON and as Markdown', async () => {
    const threadId = await newThread({ config: { approval: 'auto' } });
    await waitRun(threadId, 'run: echo exported');
    const json = await call<{ thread: Thread; messages: unknown[] }>(
      base,
      'GET',
      `/threads/${threadId}/export`,
    );
    expect(json.status).toBe(200);
    expect(json.body.thread.thread_id).toBe(threadId);
    expect(json.body.messages).toHaveLength(4);
    const markdown = await fetch(`${base}/threads/${threadId}/export?format=markdown`);
    expect(markdown.headers.get('content-type')).toContain('text/markdown');
    const text = await markdown.text();
    expect(text).toContain(`# Thread ${threadId}`);
    expect(text).toContain('## User');
    expect(text).toContain('**Tool call** `bash`');
    expect(text).toContain('exported');
    expect((await call(base, 'GET', `/threads/${threadId}/export?format=pdf`)).status).toBe(422);
  });

  it('searches by status and metadata, deletes a thread, and cleans up with a dry run first', async () => {
    const tag = randomUUID();
    const idle = await newThread({ metadata: { suite: tag, kind: 'idle' }, config: { approval: 'auto' } });
    const waiting = await newThread({ metadata: { suite: tag, kind: 'waiting' } });
    await newThread({ metadata: { suite: 'someone-else' } });
    await waitRun(idle, 'hello');
    await call(base, 'POST', `/threads/${waiting}/runs`, userInput('run: echo wait'));
    await approvalsOf(waiting, 1);

    const all = await eventually(
      async () => {
        const response = await call<Array<{ thread_id: string }>>(base, 'POST', '/threads/search', {
          metadata: { suite: tag },
        });
        return response.body.length === 2 ? response.body : undefined;
      },
      20_000,
      'both tagged threads in search',
    );
    expect(all.map((thread) => thread.thread_id).sort()).toEqual([idle, waiting].sort());
    const interrupted = await eventually(
      async () => {
        const response = await call<Array<{ thread_id: string; status: string }>>(
          base,
          'POST',
          '/threads/search',
          {
            metadata: { suite: tag },
            status: 'interrupted',
          },
        );
        return response.body.length === 1 ? response.body : undefined;
      },
      20_000,
      'the interrupted thread in search',
    );
    expect(interrupted[0]).toMatchObject({
      thread_id: waiting,
      status: 'interrupted',
      metadata: { kind: 'waiting' },
    });
    const none = await call<unknown[]>(base, 'POST', '/threads/search', {
      metadata: { suite: tag },
      older_than_days: 1,
    });
    expect(none.body).toEqual([]);
    expect((await call(base, 'POST', '/threads/search', { status: 'sleepy' })).status).toBe(422);

    // Cleanup leaves busy and interrupted threads alone unless asked for them.
    const dry = await call<{ dry_run: boolean; threads: Array<{ thread_id: string }>; deleted: string[] }>(
      base,
      'POST',
      '/threads/cleanup',
      { older_than_days: 0, metadata: { suite: tag } },
    );
    expect(dry.body.dry_run).toBe(true);
    expect(dry.body.threads.map((thread) => thread.thread_id)).toEqual([idle]);
    expect(dry.body.deleted).toEqual([]);
    expect((await call(base, 'GET', `/threads/${idle}`)).status).toBe(200);

    const real = await call<{ deleted: string[] }>(base, 'POST', '/threads/cleanup', {
      older_than_days: 0,
      metadata: { suite: tag },
      dry_run: false,
    });
    expect(real.body.deleted).toEqual([idle]);
    const deleted = await call(base, 'DELETE', `/threads/${waiting}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ thread_id: waiting, deleted: true });
    // Temporal deletes histories asynchronously (about 20 s on the dev server).
    const gone = (threadId: string) =>
      eventually(
        async () => ((await call(base, 'GET', `/threads/${threadId}`)).status === 404 ? true : undefined),
        90_000,
        `thread ${threadId} to be deleted`,
      );
    await Promise.all([gone(idle), gone(waiting)]);
    expect((await call(base, 'DELETE', `/threads/${waiting}`)).status).toBe(404);
  }, 180_000);
});
