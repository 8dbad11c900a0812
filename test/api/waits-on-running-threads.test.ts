/**
 * A waited run that may create its thread (`if_not_exists: "create"`, as clients send on every
 * turn) reaches a thread this API saw running by the update alone, without the start request
 * (decision 0301), and still creates the thread again once it was deleted. A waited run on a thread
 * the caller was authorized for and that took her input a moment ago is not described again
 * (decision 0302), and still answers 404 once the thread was deleted.
 */
import { randomUUID } from 'node:crypto';
import { apiHarness, call, userInput } from '../helpers/api';
import { countCalls } from '../helpers/temporal-calls';

jest.setTimeout(300_000);

describe('a waited run on a thread the API saw running', () => {
  const harness = apiHarness();

  const wait = (
    threadId: string,
    text: string,
    extra: Record<string, unknown> = { if_not_exists: 'create' },
  ) =>
    countCalls(harness.client, () =>
      call<{ messages: Array<{ type: string; content: unknown }> }>(
        harness.base,
        'POST',
        `/threads/${threadId}/runs/wait`,
        userInput(text, extra),
      ),
    );
  const humanTexts = (answer: { messages: Array<{ type: string; content: unknown }> }) =>
    answer.messages.filter((message) => message.type === 'human').map((message) => message.content);

  it('is asked by the update alone, and creates the thread again once it was deleted', async () => {
    const threadId = randomUUID();
    const [first, firstCalls] = await wait(threadId, 'run: echo one');
    expect(first.status).toBe(200);
    expect(firstCalls.get('executeMultiOperation')).toBe(1);

    const [second, secondCalls] = await wait(threadId, 'two');
    expect(second.status).toBe(200);
    expect(humanTexts(second.body)).toEqual(['run: echo one', 'two']);
    expect(secondCalls.get('executeMultiOperation') ?? 0).toBe(0);
    expect(secondCalls.get('updateWorkflowExecution')).toBe(1);

    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`)).status).toBe(200);
    // The update finds no running thread; the input is asked again with the start: a new thread.
    const [third, thirdCalls] = await wait(threadId, 'three');
    expect(third.status).toBe(200);
    expect(humanTexts(third.body)).toEqual(['three']);
    expect(thirdCalls.get('executeMultiOperation')).toBe(1);
  });

  it("is not described again once it took the caller's input, and answers 404 once deleted", async () => {
    const threadId = randomUUID();
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId })).status).toBe(200);
    const [first, firstCalls] = await wait(threadId, 'one', {});
    expect(first.status).toBe(200);
    expect(firstCalls.get('describeWorkflowExecution')).toBe(1);

    const [second, secondCalls] = await wait(threadId, 'run: echo two', {});
    expect(second.status).toBe(200);
    expect(humanTexts(second.body)).toEqual(['one', 'run: echo two']);
    expect(secondCalls.get('describeWorkflowExecution') ?? 0).toBe(0);

    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`)).status).toBe(200);
    const [third] = await wait(threadId, 'three', {});
    expect(third.status).toBe(404);
    expect(third.body).toMatchObject({ error: { code: 'thread_not_found' } });
  });
});
