/**
 * `runs/wait` answers the thread's every message (LangGraph's contract). The API keeps each
 * thread's answer as JSON and serializes only the messages new since its last answer: the answer
 * must stay byte for byte the whole transcript's LangChain view, turn after turn, past the
 * transcript reader's page size, with tool calls, and after a fork rewrote the transcript.
 */
import { randomUUID } from 'node:crypto';
import { apiHarness, userInput, wholeValues as wholeValuesOf } from '../helpers/api';

jest.setTimeout(300_000);

describe('the runs/wait answer of a long thread', () => {
  const harness = apiHarness();

  const wait = async (threadId: string, body: unknown): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${harness.base}/threads/${threadId}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return { status: response.status, text: await response.text() };
  };

  const wholeValues = (threadId: string): Promise<string> => wholeValuesOf(harness.client, threadId);

  it('is the whole transcript’s LangChain view, byte for byte, at every turn', async () => {
    const threadId = randomUUID();
    // About 24,000 characters a turn: the transcript passes the reader's 128K-character pages.
    const filler = `"quoted" ü 漢 ${'lorem ipsum '.repeat(2_000)}`;
    for (let turn = 1; turn <= 14; turn++) {
      const text = turn % 4 === 0 ? `run: echo turn ${turn}` : `turn ${turn}: ${filler}`;
      const answer = await wait(threadId, userInput(text, turn === 1 ? { if_not_exists: 'create' } : {}));
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(await wholeValues(threadId));
    }
    expect(JSON.parse(await wholeValues(threadId)).messages.length).toBeGreaterThan(28);
  });

  it('is whole again after the thread continued from an earlier checkpoint (a fork)', async () => {
    const threadId = randomUUID();
    for (let turn = 1; turn <= 4; turn++) {
      const answer = await wait(
        threadId,
        userInput(`turn ${turn}`, turn === 1 ? { if_not_exists: 'create' } : {}),
      );
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(await wholeValues(threadId));
    }
    const history = (await (await fetch(`${harness.base}/threads/${threadId}/history`)).json()) as Array<{
      checkpoint: { checkpoint_id: string };
      values: { messages: unknown[] };
    }>;
    const earlier = history.find((state) => state.values.messages.length === 2);
    expect(earlier).toBeDefined();
    const forked = await wait(threadId, {
      ...userInput('after the fork'),
      checkpoint: earlier!.checkpoint,
    });
    expect(forked.status).toBe(200);
    expect(forked.text).toBe(await wholeValues(threadId));
    expect(JSON.parse(forked.text).messages).toHaveLength(4);
  });
});
