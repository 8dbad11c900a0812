/**
 * The promise of docs/guide/chat-clients.md: 409 `approval_not_pending` for an approval already
 * decided, also when the first decision is still on its way (in the thread's history, by signal)
 * because no worker runs.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Run } from '../../common/run';
import { call, userInput } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import { IntakeLedger, awaitRunEnd } from './api-chat';
import { lines, workersDownHarness, workspaceOf } from './chaos-helpers';

jest.setTimeout(180_000);

describe('deciding an approval while every worker is down', () => {
  const harness = workersDownHarness();

  it('answers 409 approval_not_pending for a decision already on its way, even while no worker runs', async () => {
    const base = harness.api.url;
    const gated = `gated-${randomUUID().slice(0, 8)}`;
    const worker = await harness.fleet.start();
    await call(base, 'POST', '/threads', { thread_id: gated, config: { approval: 'require' } });
    const run = await call<Run>(base, 'POST', `/threads/${gated}/runs`, userInput('run: echo ran >> marker'));
    const approval = await eventually(async () => {
      const pending = await call<{ approval_id: string }[]>(base, 'GET', `/threads/${gated}/approvals`);
      return pending.body[0];
    });
    await worker.stop('SIGKILL');

    const decide = (body: Record<string, unknown>) =>
      call(base, 'POST', `/threads/${gated}/approvals/${approval.approval_id}`, body);
    const first = await decide({ decision: 'approve' });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ approval_id: approval.approval_id, status: 'queued' });
    const second = await decide({ decision: 'deny', reason: 'changed my mind' });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: { code: 'approval_not_pending' } });
    // The same decision again is the same conflict: the first is the one that counts.
    expect((await decide({ decision: 'approve' })).status).toBe(409);

    await harness.fleet.start();
    const ended = await awaitRunEnd(base, gated, run.body.run_id, new IntakeLedger(), Date.now() + 120_000);
    expect(ended.status).toBe('completed');
    expect(await lines(path.join(workspaceOf(harness.config, gated), 'marker'))).toEqual(['ran']);
    // With a worker, the thread itself says so.
    expect((await decide({ decision: 'deny' })).status).toBe(409);
  });
});
