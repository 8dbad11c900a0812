/**
 * Forking ("edit a message and regenerate", as chat UIs do), driven by LangGraph's own JS SDK
 * against a real Keel API and worker on the test Temporal server, with the offline scripted model:
 * a run that names an earlier checkpoint goes on from it, and the branch it leaves is kept.
 */
import { Client, type ThreadState } from '@langchain/langgraph-sdk';
import { apiHarness, failureOf } from '../helpers/api';

jest.setTimeout(180_000);

interface WireMessage {
  type: string;
  content: unknown;
}

const human = (content: string) => ({ messages: [{ type: 'human', content }] });
const messagesOf = (values: unknown): WireMessage[] => (values as { messages: WireMessage[] }).messages;
/** A thread's messages as `type: text`, the model's answers cut to their first words. */
const transcriptOf = (values: unknown): string[] =>
  messagesOf(values).map((message) => `${message.type}: ${String(message.content).slice(0, 40)}`);
const idOf = (state: ThreadState) => state.checkpoint.checkpoint_id!;
const parentOf = (state: ThreadState) => state.parent_checkpoint?.checkpoint_id ?? null;

describe('forking a thread from an earlier checkpoint, with LangGraph’s JS SDK', () => {
  const harness = apiHarness();
  let client: Client;
  beforeAll(() => {
    client = new Client({ apiUrl: harness.base });
  });

  /** A thread of three turns, and its history then. */
  async function threeTurns() {
    const thread = await client.threads.create();
    for (const text of ['first question', 'second question', 'third question'])
      await client.runs.wait(thread.thread_id, 'agent', { input: human(text) });
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    return { threadId: thread.thread_id, history };
  }

  it('edits the second message: the new branch answers from the edited prefix, and the old one is kept', async () => {
    const { threadId, history: before } = await threeTurns();
    expect(before).toHaveLength(7); // start + (input, answer) × 3
    const second = before.find((state) => messagesOf(state.values).at(-1)?.content === 'second question')!;
    const forkPoint = parentOf(second)!;

    // As useStream's submit(..., {checkpoint}) does: runs.stream with the checkpoint to go on from.
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.stream(threadId, 'agent', {
      input: human('second question, edited'),
      checkpointId: forkPoint,
      streamMode: ['values'],
    }))
      parts.push(part);
    const edited = [
      'human: first question',
      expect.stringMatching(/^ai: /),
      'human: second question, edited',
      expect.stringMatching(/^ai: /),
    ];
    const last = parts.filter((part) => part.event === 'values').at(-1)!;
    expect(transcriptOf(last.data)).toEqual(edited);
    // The answer is made from the edited prefix: the scripted model quotes the message it answers.
    expect(JSON.stringify(messagesOf(last.data).at(-1)!.content)).toContain('second question, edited');
    expect(JSON.stringify(last.data)).not.toContain('third question');

    const state = await client.threads.getState(threadId);
    expect(transcriptOf(state.values)).toEqual(edited);

    // History lists both branches: every checkpoint of the old one, unchanged, and the new one,
    // whose first checkpoint's parent is the fork point.
    const after = await client.threads.getHistory(threadId, { limit: 100 });
    expect(after).toHaveLength(before.length + 2);
    expect(idOf(after[0]!)).toBe(idOf(state));
    for (const old of before) {
      const kept = after.find((candidate) => idOf(candidate) === idOf(old));
      expect(kept && { values: kept.values, parent: parentOf(kept) }).toEqual({
        values: old.values,
        parent: parentOf(old),
      });
    }
    const newInput = after.find((candidate) => idOf(candidate) === parentOf(state))!;
    expect(transcriptOf(newInput.values)).toEqual(edited.slice(0, 3));
    expect(parentOf(newInput)).toBe(forkPoint);
    expect(newInput.metadata).toMatchObject({ step: 2, source: 'input' });
    expect(after.filter((candidate) => parentOf(candidate) === forkPoint)).toHaveLength(2);

    // The old branch's newest state still reads whole.
    const oldNewest = await client.threads.getState(threadId, idOf(before[0]!));
    expect(transcriptOf(oldNewest.values)).toEqual(transcriptOf(before[0]!.values));
    expect(transcriptOf(oldNewest.values)).toHaveLength(6);

    // The thread goes on from the new branch.
    const next = await client.runs.wait(threadId, 'agent', { input: human('fourth question') });
    expect(transcriptOf(next)).toEqual([...edited, 'human: fourth question', expect.stringMatching(/^ai: /)]);

    // A copy of the thread holds both branches too.
    const copy = await client.threads.copy(threadId);
    const tree = (states: ThreadState[]) => states.map((state) => [idOf(state), parentOf(state)]);
    expect(tree(await client.threads.getHistory(copy.thread_id, { limit: 100 }))).toEqual(
      tree(await client.threads.getHistory(threadId, { limit: 100 })),
    );
  });

  it('goes back to a checkpoint of the earlier branch, keeping the branch it leaves', async () => {
    const { threadId, history: before } = await threeTurns();
    const second = before.find((state) => messagesOf(state.values).at(-1)?.content === 'second question')!;
    await client.runs.wait(threadId, 'agent', {
      input: human('second question, edited'),
      checkpointId: parentOf(second)!,
    });
    const editedState = await client.threads.getState(threadId);

    // As useStream sends it: `checkpoint: {checkpoint_id, …}`, here the old branch's newest state.
    const values = await client.runs.wait(threadId, 'agent', {
      input: human('and a fourth on the old branch'),
      checkpoint: before[0]!.checkpoint,
    });
    expect(transcriptOf(values)).toEqual([
      ...transcriptOf(before[0]!.values),
      'human: and a fourth on the old branch',
      expect.stringMatching(/^ai: /),
    ]);
    const after = await client.threads.getHistory(threadId, { limit: 100 });
    expect(after).toHaveLength(before.length + 4);
    const stillThere = await client.threads.getState(threadId, idOf(editedState));
    expect(stillThere.values).toEqual(editedState.values);
    expect(after.find((state) => idOf(state) === parentOf(after[0]!))).toMatchObject({
      parent_checkpoint: { checkpoint_id: idOf(before[0]!) },
    });
  });

  it('forks while a run is under way as any run does: refused under reject, queued under enqueue', async () => {
    const thread = await client.threads.create();
    const threadId = thread.thread_id;
    await client.runs.wait(threadId, 'agent', { input: human('first question') });
    const forkPoint = idOf(await client.threads.getState(threadId));
    await client.runs.wait(threadId, 'agent', { input: human('second question') });
    const busy = await client.runs.create(threadId, 'agent', { input: human('think: 3') });

    const refused = await failureOf(
      client.runs.create(threadId, 'agent', {
        input: human('second question, edited'),
        checkpointId: forkPoint,
        multitaskStrategy: 'reject',
      }),
    );
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'thread_busy' } } });

    const queued = await client.runs.create(threadId, 'agent', {
      input: human('second question, edited'),
      checkpointId: forkPoint,
      multitaskStrategy: 'enqueue',
    });
    const values = await client.runs.join(threadId, queued.run_id);
    expect(transcriptOf(values)).toEqual([
      'human: first question',
      expect.stringMatching(/^ai: /),
      'human: second question, edited',
      expect.stringMatching(/^ai: /),
    ]);
    expect(await client.runs.get(threadId, busy.run_id)).toMatchObject({ status: 'completed' });
    // The run that was under way finished on the branch the fork left, and is kept there.
    const history = await client.threads.getHistory(threadId, { limit: 100 });
    const thinking = history.find((state) => messagesOf(state.values).at(-1)?.content === 'think: 3');
    expect(thinking && transcriptOf(thinking.values)).toEqual([
      'human: first question',
      expect.stringMatching(/^ai: /),
      'human: second question',
      expect.stringMatching(/^ai: /),
      'human: think: 3',
    ]);
  });

  it('refuses an unknown checkpoint with 404 checkpoint_not_found, and changes nothing', async () => {
    const { threadId, history } = await threeTurns();
    const failure = await failureOf(
      client.runs.wait(threadId, 'agent', { input: human('edited'), checkpointId: 'm999' }),
    );
    expect(failure).toMatchObject({
      status: 404,
      body: { error: { type: expect.any(String), code: 'checkpoint_not_found' }, detail: expect.any(String) },
    });
    expect(await client.runs.list(threadId)).toHaveLength(3);
    expect(await client.threads.getHistory(threadId, { limit: 100 })).toEqual(history);
  });
});
