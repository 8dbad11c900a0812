/** Sub-agents: `spawn_agent` starts a child conversation workflow, in the foreground or background. */
import { randomUUID } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import type { Run } from '../../common/run';
import type { Thread } from '../../common/thread';
import type { LangChainMessage } from '../../api/protocol/langchain-messages';
import { apiHarness, call, createThread, userInput, waitRun } from '../helpers/api';
import { durable, readSse } from '../helpers/sse';
import { eventually } from '../helpers/temporal';
import { workflowIdFor } from '../../common/thread';
import type { StateDump } from '../../common/messages';

jest.setTimeout(120_000);

describe('sub-agents', () => {
  const harness = apiHarness();

  /** The children a thread's state records (its debug dump). */
  async function childrenOf(threadId: string): Promise<Array<{ child_thread_id: string }>> {
    const dump = await harness.client.workflow
      .getHandle(workflowIdFor(threadId))
      .query<StateDump>('getState');
    return (dump.state.children as Array<{ child_thread_id: string }> | undefined) ?? [];
  }
  let base: string;
  beforeAll(() => {
    base = harness.base;
  });

  const newThread = () => createThread(base, 'p');
  const runs = async (threadId: string) => (await call<Run[]>(base, 'GET', `/threads/${threadId}/runs`)).body;
  const continuationOf = (threadId: string, runId: string) =>
    eventually(
      async () =>
        (await runs(threadId)).find((run) => run.continuation_of === runId && run.status === 'completed'),
      60_000,
      'the continuation run',
    );
  const toolResultText = (messages: LangChainMessage[]): string =>
    messages.flatMap((message) => (message.type === 'tool' ? [message.content] : [])).join('\n');

  it('waits for a foreground child and answers with its result in the same step', async () => {
    const threadId = await newThread();
    const waited = await waitRun<{ messages: LangChainMessage[] }>(
      base,
      threadId,
      userInput('spawn: count the stars'),
    );
    expect(waited.status).toBe(200);
    const result = toolResultText(waited.body.messages);
    expect(result).toContain('completed');
    expect(result).toContain('count the stars');
    const [run] = await runs(threadId);
    const stream = await readSse(`${base}/threads/${threadId}/runs/${run!.run_id}/stream?stream_mode=keel`);
    const names = durable(stream.events).map((event) => event.event);
    expect(names).toEqual(expect.arrayContaining(['child.spawned', 'child.completed']));
    const spawned = durable(stream.events).find((event) => event.event === 'child.spawned')!;
    const child = await call<Thread>(base, 'GET', `/threads/${String(spawned.data.child_thread_id)}`);
    expect(child.body.metadata).toMatchObject({ keel_child_of: { parent_thread_id: threadId } });
    // The child's tokens count toward the parent run.
    expect(run!.usage.output_tokens).toBeGreaterThan(child.body.usage.output_tokens);
  });

  it("is left out of LangGraph clients' thread lists, and found by the keel_child_of its memo holds", async () => {
    const threadId = await newThread();
    const waited = await waitRun(base, threadId, userInput('spawn: name a colour'));
    expect(waited.status).toBe(200);
    const [run] = await runs(threadId);
    const stream = await readSse(`${base}/threads/${threadId}/runs/${run!.run_id}/stream?stream_mode=keel`);
    const spawned = durable(stream.events).find((event) => event.event === 'child.spawned')!;
    const childId = String(spawned.data.child_thread_id);
    const origin = (await call<Thread>(base, 'GET', `/threads/${childId}`)).body.metadata.keel_child_of;
    const client = new Client({ apiUrl: base });
    // Visibility lists the child once its memo is in: it then carries the metadata the API filters by.
    const children = await eventually(
      async () => {
        const found = await client.threads.search({ metadata: { keel_child_of: origin }, limit: 10 });
        return found.length > 0 ? found : undefined;
      },
      30_000,
      'the child in a search by its keel_child_of',
    );
    expect(children.map((thread) => thread.thread_id)).toEqual([childId]);
    expect(children[0]!.metadata).toMatchObject({ keel_child_of: { parent_thread_id: threadId } });
    const listed = await client.threads.search({ limit: 100 });
    const ids = listed.map((thread) => thread.thread_id);
    expect(ids).toContain(threadId);
    expect(ids).not.toContain(childId);
    expect(ids.filter((id) => id.startsWith(`${threadId}.`))).toEqual([]);
    const counted = await call<number>(base, 'POST', '/threads/count', {});
    const all = await client.threads.search({ limit: 1000 });
    expect(counted.body).toBe(all.length);
  });

  it('lets a slow foreground child go on in the background and turns its result into a continuation run', async () => {
    const threadId = await newThread();
    const waited = await waitRun<{ messages: LangChainMessage[] }>(
      base,
      threadId,
      userInput('tool: spawn_agent {"task": "think: 4", "timeout_s": 1}'),
    );
    expect(waited.status).toBe(200);
    expect(toolResultText(waited.body.messages)).toContain('continues in the background');
    const [parent] = await runs(threadId);
    expect(parent!.status).toBe('completed');
    const usageAtFirst = parent!.usage.output_tokens;
    const continuation = await continuationOf(threadId, parent!.run_id);
    expect(continuation.output).toContain('Sub-agent');
    expect(continuation.output).toContain('think: 4');
    const after = (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${parent!.run_id}`)).body;
    expect(after.usage.output_tokens).toBeGreaterThan(usageAtFirst);
    const childThreadId = `${threadId}.${(continuation.metadata as { child_thread_id: string }).child_thread_id.split('.').at(-1)!}`;
    const child = await eventually(
      async () => {
        const thread = (await call<Thread>(base, 'GET', `/threads/${childThreadId}`)).body;
        return thread.status === 'closed' ? thread : undefined;
      },
      30_000,
      'the child to close',
    );
    expect(child.status).toBe('closed');
  });

  it('returns at once for a background child, and its result arrives as a continuation run', async () => {
    const threadId = await newThread();
    const waited = await waitRun<{ messages: LangChainMessage[] }>(
      base,
      threadId,
      userInput('tool: spawn_agent {"task": "think: 2", "background": true}'),
    );
    expect(toolResultText(waited.body.messages)).toContain('started in the background');
    const [parent] = await runs(threadId);
    const continuation = await continuationOf(threadId, parent!.run_id);
    expect(continuation.output).toContain('finished the task "think: 2" (completed)');
  });

  it('stops a running child with the run that started it: the child run is cancelled and reports, and the parent lets go of it', async () => {
    const threadId = await newThread();
    const started = await call<Run>(
      base,
      'POST',
      `/threads/${threadId}/runs`,
      userInput('tool: spawn_agent {"task": "think: 30"}'),
    );
    const children = () => childrenOf(threadId);
    const childThreadId = await eventually(
      async () => (await children())[0]?.child_thread_id,
      30_000,
      'the child to start',
    );
    await eventually(
      async () =>
        (await call<Run[]>(base, 'GET', `/threads/${childThreadId}/runs`)).body[0]?.status === 'running' ||
        undefined,
      30_000,
      "the child's run to start",
    );
    expect(
      (await call(base, 'POST', `/threads/${threadId}/runs/${started.body.run_id}/cancel`, {})).status,
    ).toBe(200);
    // Before the patch, the child workflow was cancelled mid-run: its run stayed `running`, it
    // never reported, and the parent held its record for good.
    const [childRun] = await eventually(
      async () => {
        const childRuns = (await call<Run[]>(base, 'GET', `/threads/${childThreadId}/runs`)).body;
        return childRuns[0]?.status === 'cancelled' ? childRuns : undefined;
      },
      30_000,
      "the child's run to be cancelled",
    );
    expect(childRun!.status).toBe('cancelled');
    await eventually(
      async () => ((await children()).length === 0 ? true : undefined),
      30_000,
      'the parent to let go',
    );
    const described = await harness.client.workflow.getHandle(workflowIdFor(childThreadId)).describe();
    await eventually(
      async () =>
        (await harness.client.workflow.getHandle(workflowIdFor(childThreadId)).describe()).status.name ===
          'COMPLETED' || undefined,
      30_000,
      'the child to close after reporting',
    );
    expect(described.status.name).not.toBe('CANCELLED');
    const [parent] = await runs(threadId);
    expect(parent!.status).toBe('cancelled');
  });

  it("stops a child that waits on an approval with its parent's run: the child's run is cancelled, its share released, its spend counted once (issue 37)", async () => {
    const threadId = `p-${randomUUID()}`;
    // scripted:metered bills every call; the child copies `approval: require`, so its bash call waits.
    await call(base, 'POST', '/threads', {
      thread_id: threadId,
      config: { model: 'scripted:metered', max_cost_usd: 1, approval: 'require' },
    });
    const started = await call<Run>(
      base,
      'POST',
      `/threads/${threadId}/runs`,
      userInput('tool: spawn_agent {"task": "run: echo waits for a person"}'),
    );
    const parentThread = async () => (await call<Thread>(base, 'GET', `/threads/${threadId}`)).body;
    const children = () => childrenOf(threadId);
    const childThreadId = await eventually(
      async () => (await children())[0]?.child_thread_id,
      30_000,
      'the child to start',
    );
    const approvals = async () =>
      (await call<unknown[]>(base, 'GET', `/threads/${childThreadId}/approvals`)).body;
    await eventually(
      async () => ((await approvals()).length === 1 ? true : undefined),
      30_000,
      "the child's approval",
    );
    // The parent's own call is spent; the child's share is held, not spent.
    const before = await parentThread();
    expect(before.budget!.reserved.cost_usd).toBeGreaterThan(0);
    const own = before.usage.cost_usd;
    expect(own).toBeGreaterThan(0);

    expect(
      (await call(base, 'POST', `/threads/${threadId}/runs/${started.body.run_id}/cancel`, {})).status,
    ).toBe(200);
    const childRuns = await eventually(
      async () => {
        const found = (await call<Run[]>(base, 'GET', `/threads/${childThreadId}/runs`)).body;
        return found[0]?.status === 'cancelled' ? found : undefined;
      },
      30_000,
      "the child's run to be cancelled",
    );
    expect(childRuns).toHaveLength(1);
    expect(await approvals()).toEqual([]);
    await eventually(
      async () => ((await children()).length === 0 ? true : undefined),
      30_000,
      'the parent to let go',
    );
    const child = (await call<Thread>(base, 'GET', `/threads/${childThreadId}`)).body;
    expect(child.usage.cost_usd).toBeGreaterThan(0);
    // Released: nothing held for the child; billed once: the parent's own call plus the child's.
    const after = await parentThread();
    expect(after.budget!.reserved.cost_usd).toBe(0);
    expect(after.usage.cost_usd).toBeCloseTo(own + child.usage.cost_usd, 9);
    expect(after.budget!.spent.cost_usd).toBeCloseTo(after.usage.cost_usd, 9);
    const [parentRun] = await runs(threadId);
    expect(parentRun!.status).toBe('cancelled');
    expect(parentRun!.usage.cost_usd).toBeCloseTo(after.usage.cost_usd, 9);
  });
});
