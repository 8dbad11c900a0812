/**
 * Thread ids are per owner (decision 0160): an id another owner holds is, to the caller, an id
 * nobody holds. She can make her own thread of that id; nothing of the other thread is read,
 * written, listed or refused through it. A thread made before ids were scoped is still its
 * owner's, at its old workflow id. Without tokens, workflow ids are what they always were.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { searchAttributes } from '../../common/search-attributes';
import { workflowIdFor } from '../../common/thread';
import { scopeFor } from '../../api/threads/thread-ref';
import { apiHarness, call, userInput, type ApiHarness, type JsonResponse } from '../helpers/api';
import { eventually } from '../helpers/temporal';

const alice = { authorization: 'Bearer alice-0123456789abcdef' };
const bob = { authorization: 'Bearer bob-0123456789abcdef0' };

type Body = Record<string, unknown> & { error?: { code: string; message: string } };

/** The answer with the thread id it names replaced, and the fields that differ by nature blanked. */
function shapeOf(answer: JsonResponse<Body>, threadId: string) {
  const masked = JSON.parse(JSON.stringify(answer.body).replaceAll(threadId, '<id>')) as Body;
  for (const key of ['created_at', 'updated_at']) if (key in masked) masked[key] = '<time>';
  return { status: answer.status, body: masked };
}

/** A thread as the API made it before ids were scoped: `conversation-<thread_id>`, owner recorded. */
async function startUnscopedThread(harness: ApiHarness, threadId: string, owner: string) {
  const createdAt = new Date().toISOString();
  await harness.client.workflow.start('conversationWorkflow', {
    workflowId: workflowIdFor(threadId),
    taskQueue: harness.config.taskQueue,
    args: [
      {
        thread_id: threadId,
        owner,
        metadata: { made: 'before scoped ids' },
        config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 300, max_steps: 50 },
        created_at: createdAt,
      },
    ],
    memo: { metadata: { made: 'before scoped ids' }, created_at: createdAt },
    typedSearchAttributes: [
      { key: searchAttributes.status, value: 'idle' },
      { key: searchAttributes.owner, value: owner },
      { key: searchAttributes.model, value: 'scripted:demo' },
      { key: searchAttributes.costUsd, value: 0 },
      { key: searchAttributes.turns, value: 0 },
    ],
  });
}

const stateText = async (harness: ApiHarness, threadId: string, who: Record<string, string>) => {
  const state = await call(harness.base, 'GET', `/threads/${threadId}/state`, undefined, who);
  expect(state.status).toBe(200);
  return JSON.stringify(state.body);
};

const searchIds = async (harness: ApiHarness, who: Record<string, string>, ids?: string[]) => {
  const found = await call<Array<{ thread_id: string; owner?: string }>>(
    harness.base,
    'POST',
    '/threads/search',
    { limit: 1000, ...(ids === undefined ? {} : { ids }) },
    who,
  );
  expect(found.status).toBe(200);
  return found.body;
};

describe('thread ids across owners', () => {
  const harness = apiHarness(() => ({
    KEEL_API_TOKENS: 'alice:alice-0123456789abcdef,bob:bob-0123456789abcdef0',
  }));

  it('answers creating an id another owner holds exactly as creating an id nobody holds', async () => {
    const held = `held-${randomUUID()}`;
    const fresh = `fresh-${randomUUID()}`;
    expect((await call(harness.base, 'POST', '/threads', { thread_id: held }, bob)).status).toBe(200);

    // Before either exists for her: the same 404.
    const readHeld = await call<Body>(harness.base, 'GET', `/threads/${held}`, undefined, alice);
    const readFresh = await call<Body>(harness.base, 'GET', `/threads/${fresh}`, undefined, alice);
    expect(shapeOf(readHeld, held)).toEqual(shapeOf(readFresh, fresh));
    expect(readHeld.status).toBe(404);

    // Creating: the same 200 and the same thread shape, hers, whoever holds the id elsewhere.
    for (const ifExists of ['raise', 'do_nothing'] as const) {
      const suffix = ifExists === 'raise' ? '' : '-again';
      if (suffix !== '') {
        expect(
          (await call(harness.base, 'POST', '/threads', { thread_id: `${held}${suffix}` }, bob)).status,
        ).toBe(200);
      }
      const onHeld = await call<Body>(
        harness.base,
        'POST',
        '/threads',
        { thread_id: `${held}${suffix}`, if_exists: ifExists },
        alice,
      );
      const onFresh = await call<Body>(
        harness.base,
        'POST',
        '/threads',
        { thread_id: `${fresh}${suffix}`, if_exists: ifExists },
        alice,
      );
      expect(shapeOf(onHeld, `${held}${suffix}`)).toEqual(shapeOf(onFresh, `${fresh}${suffix}`));
      expect(onHeld).toMatchObject({ status: 200, body: { thread_id: `${held}${suffix}`, owner: 'alice' } });
    }

    // Her own id taken again is refused as it always was, the held one now included: it is hers.
    const againHeld = await call<Body>(harness.base, 'POST', '/threads', { thread_id: held }, alice);
    const againFresh = await call<Body>(harness.base, 'POST', '/threads', { thread_id: fresh }, alice);
    expect(shapeOf(againHeld, held)).toEqual(shapeOf(againFresh, fresh));
    expect(againHeld.status).toBe(409);
    expect(againHeld.body.error?.code).toBe('thread_exists');
  });

  it("keeps two owners' threads of one id apart: runs, workspaces, listing and deletion", async () => {
    const threadId = `shared-${randomUUID()}`;
    const marker = `bob-secret-${randomUUID()}`;
    const bobRun = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      { ...userInput(`write: notes.txt: ${marker}`), if_not_exists: 'create' },
      bob,
    );
    expect(bobRun.status).toBe(200);

    // A run with create is hers, at her own thread of that id, as for an id nobody holds.
    const aliceRun = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      { ...userInput('read: notes.txt'), if_not_exists: 'create' },
      alice,
    );
    expect(aliceRun.status).toBe(200);
    const hers = await stateText(harness, threadId, alice);
    // Her thread's workspace is her own: bob's file is not in it.
    expect(hers).not.toContain(marker);
    expect(hers).toContain('read: notes.txt');
    const his = await stateText(harness, threadId, bob);
    expect(his).toContain(marker);
    expect(his).not.toContain('read: notes.txt');

    const aliceThread = await call(harness.base, 'GET', `/threads/${threadId}`, undefined, alice);
    const bobThread = await call(harness.base, 'GET', `/threads/${threadId}`, undefined, bob);
    expect(aliceThread.body).toMatchObject({ owner: 'alice', summary: { runs: 1 } });
    expect(bobThread.body).toMatchObject({ owner: 'bob', summary: { runs: 1 } });

    // Each owner's search finds her own thread of that id, once, and never the other's.
    for (const [who, owner] of [
      [alice, 'alice'],
      [bob, 'bob'],
    ] as const) {
      const byId = await searchIds(harness, who, [threadId]);
      expect(byId).toEqual([expect.objectContaining({ thread_id: threadId, owner })]);
      const all = await searchIds(harness, who);
      expect(all.every((thread) => thread.owner === owner)).toBe(true);
      expect(all.filter((thread) => thread.thread_id === threadId)).toHaveLength(1);
    }

    // Deleting hers leaves his as it was.
    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`, undefined, alice)).status).toBe(200);
    expect((await call(harness.base, 'GET', `/threads/${threadId}`, undefined, alice)).status).toBe(404);
    expect(await stateText(harness, threadId, bob)).toContain(marker);
  });

  it("keeps a thread's sub-agents and crons in its owner's scope", async () => {
    const threadId = `agents-${randomUUID()}`;
    // Bob holds the id too: nothing below may reach his thread.
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId }, bob)).status).toBe(200);
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId }, alice)).status).toBe(200);

    // A foreground child answers in the same step only if its report reached its parent.
    const waited = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      userInput('spawn: count the stars'),
      alice,
    );
    expect(waited.status).toBe(200);
    const text = JSON.stringify(waited.body);
    expect(text).toContain('completed');
    expect(text).not.toContain('continues in the background');
    // The child's thread is `<parent>.<tool call id>`; searches leave sub-agents out (decision 0401).
    const { messages } = waited.body as { messages: Array<{ tool_calls?: Array<{ id: string }> }> };
    const callId = messages.flatMap((message) => message.tool_calls ?? [])[0]!.id;
    const childId = `${threadId}.${callId}`;
    await harness.client.workflow.getHandle(workflowIdFor(childId, scopeFor('alice'))).describe();
    const child = await call<{ metadata: Record<string, unknown> }>(
      harness.base,
      'GET',
      `/threads/${childId}`,
      undefined,
      alice,
    );
    expect(child.status).toBe(200);
    expect((await call(harness.base, 'GET', `/threads/${childId}`, undefined, bob)).status).toBe(404);
    expect((await searchIds(harness, alice)).map((thread) => thread.thread_id)).not.toContain(childId);
    const byOrigin = { limit: 10, metadata: { keel_child_of: child.body.metadata.keel_child_of } };
    const found = await eventually(async () => {
      const listed = await call<Array<{ thread_id: string }>>(
        harness.base,
        'POST',
        '/threads/search',
        byOrigin,
        alice,
      );
      return listed.body.length > 0 ? listed.body : undefined;
    });
    expect(found.map((thread) => thread.thread_id)).toEqual([childId]);
    expect((await call<unknown[]>(harness.base, 'POST', '/threads/search', byOrigin, bob)).body).toEqual([]);

    // A cron of her thread runs on her thread; a stateless one of hers makes threads of hers.
    const fire = (cronId: string) => harness.client.schedule.getHandle(`cron-${cronId}`).trigger();
    const cron = await call<{ cron_id: string }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/crons`,
      {
        assistant_id: 'agent',
        schedule: '0 9 * * *',
        input: { messages: [{ role: 'user', content: 'by cron' }] },
      },
      alice,
    );
    expect(cron.status).toBe(200);
    await fire(cron.body.cron_id);
    await eventually(async () => {
      const runs = await call<Array<{ status: string }>>(
        harness.base,
        'GET',
        `/threads/${threadId}/runs`,
        undefined,
        alice,
      );
      return runs.body.length === 2 && runs.body.every((run) => run.status === 'completed')
        ? true
        : undefined;
    });
    expect(await stateText(harness, threadId, alice)).toContain('by cron');
    expect(await stateText(harness, threadId, bob)).not.toContain('by cron');

    const stateless = await call<{ cron_id: string }>(
      harness.base,
      'POST',
      '/runs/crons',
      {
        assistant_id: 'agent',
        schedule: '0 9 * * *',
        input: { messages: [{ role: 'user', content: 'fresh' }] },
      },
      alice,
    );
    expect(stateless.status).toBe(200);
    await fire(stateless.body.cron_id);
    const made = await eventually(async () => {
      const found = await call<Array<{ thread_id: string; owner?: string }>>(
        harness.base,
        'POST',
        '/threads/search',
        { metadata: { cron_id: stateless.body.cron_id } },
        alice,
      );
      return found.body.length === 1 ? found.body[0]! : undefined;
    });
    expect(made.owner).toBe('alice');
    await harness.client.workflow.getHandle(workflowIdFor(made.thread_id, scopeFor('alice'))).describe();
    for (const cronId of [cron.body.cron_id, stateless.body.cron_id])
      expect((await call(harness.base, 'DELETE', `/runs/crons/${cronId}`, undefined, alice)).status).toBe(
        204,
      );
  });

  it('keeps a thread made before ids were scoped its owner’s, at its old id', async () => {
    const threadId = `legacy-${randomUUID()}`;
    await startUnscopedThread(harness, threadId, 'alice');

    // Its owner finds it, runs on it, with or without create, and it stays one thread.
    expect((await call(harness.base, 'GET', `/threads/${threadId}`, undefined, alice)).body).toMatchObject({
      thread_id: threadId,
      owner: 'alice',
      metadata: { made: 'before scoped ids' },
    });
    const first = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      userInput('first after the upgrade'),
      alice,
    );
    expect(first.status).toBe(200);
    const second = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      { ...userInput('second, with create'), if_not_exists: 'create' },
      alice,
    );
    expect(second.status).toBe(200);
    const text = await stateText(harness, threadId, alice);
    expect(text).toContain('first after the upgrade');
    expect(text).toContain('second, with create');
    // Both runs went to the old workflow; no thread of hers was made at the scoped id.
    const old = await harness.client.workflow.getHandle(workflowIdFor(threadId)).describe();
    expect(old.status.name).toBe('RUNNING');
    const runs = await call<unknown[]>(harness.base, 'GET', `/threads/${threadId}/runs`, undefined, alice);
    expect(runs.body).toHaveLength(2);
    // Creating it again is refused as her own taken id, and listing shows it once.
    const again = await call<Body>(harness.base, 'POST', '/threads', { thread_id: threadId }, alice);
    expect([again.status, again.body.error?.code]).toEqual([409, 'thread_exists']);
    expect(await searchIds(harness, alice, [threadId])).toEqual([
      expect.objectContaining({ thread_id: threadId, owner: 'alice' }),
    ]);

    // To bob it is an id nobody holds: 404 as any, and he can make his own of it.
    const never = `never-${randomUUID()}`;
    expect(
      shapeOf(await call<Body>(harness.base, 'GET', `/threads/${threadId}`, undefined, bob), threadId),
    ).toEqual(shapeOf(await call<Body>(harness.base, 'GET', `/threads/${never}`, undefined, bob), never));
    expect(await searchIds(harness, bob, [threadId])).toEqual([]);
    const his = await call(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      { ...userInput('bob was here'), if_not_exists: 'create' },
      bob,
    );
    expect(his.status).toBe(200);
    expect(await stateText(harness, threadId, alice)).not.toContain('bob was here');
    expect(await stateText(harness, threadId, bob)).not.toContain('first after the upgrade');

    // She deletes it as any thread of hers, and the id is hers to use again.
    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`, undefined, alice)).status).toBe(200);
    expect((await call(harness.base, 'GET', `/threads/${threadId}`, undefined, alice)).status).toBe(404);
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId }, alice)).status).toBe(200);
    expect(await stateText(harness, threadId, bob)).toContain('bob was here');
  });
});

describe('thread ids without tokens', () => {
  const harness = apiHarness();

  it('keeps the workflow id conversation-<thread_id>, as before ids were scoped', async () => {
    const threadId = `local-${randomUUID()}`;
    const created = await call(harness.base, 'POST', '/threads', { thread_id: threadId });
    expect(created).toMatchObject({ status: 200, body: { thread_id: threadId } });
    const described = await harness.client.workflow.getHandle(workflowIdFor(threadId)).describe();
    expect(described.status.name).toBe('RUNNING');
    await expect(
      harness.client.workflow.getHandle(workflowIdFor(threadId, '0123456789abcdef')).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    const run = await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('hello'));
    expect(run.status).toBe(200);
  });
});
