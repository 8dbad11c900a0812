/**
 * A thread id another owner holds: nothing of that thread is read or written through it, and
 * the answers are those of any thread the caller cannot see.
 */
import { randomUUID } from 'node:crypto';
import { apiHarness, call, userInput } from '../helpers/api';

const alice = { authorization: 'Bearer alice-0123456789abcdef' };
const bob = { authorization: 'Bearer bob-0123456789abcdef0' };

describe('a thread id held by another owner', () => {
  const harness = apiHarness(() => ({
    KEEL_API_TOKENS: 'alice:alice-0123456789abcdef,bob:bob-0123456789abcdef0',
  }));

  it("never takes a run into the other owner's thread, even with if_not_exists=create", async () => {
    const threadId = `held-${randomUUID()}`;
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId }, bob)).status).toBe(200);
    expect(
      (await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('hello from bob'), bob))
        .status,
    ).toBe(200);

    for (const path of [`/threads/${threadId}/runs`, `/threads/${threadId}/runs/wait`]) {
      const injected = await call<{ error: { code: string } }>(
        harness.base,
        'POST',
        path,
        { ...userInput('injected by alice'), if_not_exists: 'create' },
        alice,
      );
      expect([path, injected.status, injected.body.error.code]).toEqual([path, 404, 'thread_not_found']);
    }
    // The same answer as an id that was never anyone's, read without create.
    const unknown = await call<{ error: { code: string } }>(
      harness.base,
      'POST',
      `/threads/never-${randomUUID()}/runs`,
      userInput('x'),
      alice,
    );
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'thread_not_found']);

    const state = await call(harness.base, 'GET', `/threads/${threadId}/state`, undefined, bob);
    expect(JSON.stringify(state.body)).toContain('hello from bob');
    expect(JSON.stringify(state.body)).not.toContain('injected by alice');
    // Creating it outright is refused as any taken id is, her own included: the id is taken,
    // nothing says whose (decision 0085).
    const taken = await call(harness.base, 'POST', '/threads', { thread_id: threadId }, alice);
    const mine = `own-${randomUUID()}`;
    await call(harness.base, 'POST', '/threads', { thread_id: mine }, alice);
    const ownTaken = await call(harness.base, 'POST', '/threads', { thread_id: mine }, alice);
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual(ownTaken.body);
    // Alice's own new thread under create still works.
    const own = await call(
      harness.base,
      'POST',
      `/threads/mine-${randomUUID()}/runs/wait`,
      { ...userInput('hello from alice'), if_not_exists: 'create' },
      alice,
    );
    expect(own.status).toBe(200);
  });
});
