/**
 * What an operator sees of a thread in the Temporal Web UI: a summary (its title or first
 * message), fixed details, its metadata in the memo, and current details naming the thread.
 */
import { randomUUID } from 'node:crypto';
import { workflowIdFor } from '../../common/thread';
import { apiHarness, call, userInput, waitRun } from '../helpers/api';
import { outlineHistory } from '../helpers/history';

jest.setTimeout(120_000);

const harness = apiHarness();

const describeThread = (threadId: string) =>
  harness.client.workflow.getHandle(workflowIdFor(threadId)).describe();

const currentDetails = async (threadId: string): Promise<string> => {
  const metadata = await harness.client.workflow
    .getHandle(workflowIdFor(threadId))
    .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
};

describe('a thread in the Temporal Web UI', () => {
  it('is summarized by its title, with its metadata in the memo', async () => {
    const created = await call<{ thread_id: string }>(harness.base, 'POST', '/threads', {
      metadata: { title: 'Refund for order 42', customer: 'c-7' },
    });
    expect(created.status).toBe(200);
    const description = await describeThread(created.body.thread_id);
    expect(await description.staticSummary()).toBe('Refund for order 42');
    const details = await description.staticDetails();
    expect(details).toContain(`Keel thread \`${created.body.thread_id}\``);
    expect(details).toContain('model: `scripted:demo`');
    expect(description.memo?.metadata).toMatchObject({ title: 'Refund for order 42', customer: 'c-7' });
    expect(await currentDetails(created.body.thread_id)).toMatch(/^\*\*Thread:\*\* Refund for order 42\n/);
  });

  it('is summarized by its first message when a run creates it', async () => {
    const threadId = randomUUID();
    const run = await waitRun(
      harness.base,
      threadId,
      userInput('Where is my parcel?', { if_not_exists: 'create' }),
    );
    expect(run.status).toBe(200);
    const description = await describeThread(threadId);
    expect(await description.staticSummary()).toBe('Where is my parcel?');
    expect(await currentDetails(threadId)).toMatch(
      /^\*\*Thread:\*\* Where is my parcel\?\n\*\*Status:\*\* idle/,
    );
  });

  it('holds two patch markers per workflow run, and a visibility write only when the status changes', async () => {
    const threadId = randomUUID();
    for (const text of ['Where is my parcel?', 'run: echo tracking']) {
      const run = await waitRun(harness.base, threadId, userInput(text, { if_not_exists: 'create' }));
      expect(run.status).toBe(200);
    }
    const history = await harness.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();
    const { outline } = outlineHistory(history.events ?? []);
    // One marker for every patch until decision 0220, whose name Temporal's core upserts beside
    // it, and the one patch since, asked at the first streamed model call (decision 0370).
    expect(outline.filter((event) => event.startsWith('patch '))).toEqual([
      'patch keel-tracing-per-worker',
      'patch keel-stop-keeps-partial',
    ]);
    expect(outline.filter((event) => event === 'visibility TemporalChangeVersion')).toHaveLength(2);
    // The API started the thread idle: busy and idle again per turn, nothing else (the cost goes
    // with them), and no write of what the thread started with.
    expect(outline.filter((event) => event.startsWith('visibility Keel'))).toHaveLength(4);
    expect(outline.filter((event) => event.startsWith('schedule '))).toEqual([
      'schedule callModel',
      'schedule callModel',
      'schedule runTool',
      'schedule callModel',
    ]);
  });
});
