/**
 * The peer benchmark's reading of Keel's histories (no figures): each turn of a real thread is
 * found, its events are counted so that the turns cover the whole history, and its times are in
 * order.
 */
import { Client } from '@langchain/langgraph-sdk';
import { workflowIdFor } from '../../common/thread';
import { keelTurns } from '../../bench/peer/keel-history';
import { turnSpans } from '../../bench/history-spans';
import { apiHarness } from '../helpers/api';

jest.setTimeout(120_000);

describe("the peer benchmark's Keel turn records", () => {
  const harness = apiHarness();

  it('finds every turn of a thread in its history, counts its events and orders its times', async () => {
    const client = new Client({ apiUrl: harness.base, apiKey: null });
    const { thread_id: threadId } = await client.threads.create();
    for (const text of ['run: echo one', 'run: echo two', 'hello'])
      await client.runs.wait(threadId, 'agent', { input: { messages: [{ role: 'user', content: text }] } });

    const turns = await keelTurns(harness.client, threadId);
    const history = await harness.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();

    expect(turns.map((turn) => turn.first)).toEqual([true, false, false]);
    // The first turn counts from the workflow's start, each later one from its own first task.
    expect(turns.reduce((sum, turn) => sum + turn.events, 0)).toBe(history.events!.length);
    // A tool turn (model, bash, model) writes more than a plain one (model).
    expect(turns[1]!.events).toBeGreaterThan(turns[2]!.events);
    for (const turn of turns) {
      expect(turn.started_ms).toBeGreaterThanOrEqual(turn.scheduled_ms);
      expect(turn.completed_ms).toBeGreaterThan(turn.started_ms);
    }
    expect(turns[1]!.started_ms).toBeGreaterThan(turns[0]!.completed_ms);
    expect(turns[2]!.started_ms).toBeGreaterThan(turns[1]!.completed_ms);
  });

  it("splits the step benchmark's turns into time inside and outside their activities", async () => {
    const client = new Client({ apiUrl: harness.base, apiKey: null });
    const { thread_id: threadId } = await client.threads.create();
    for (const text of ['hello', 'run: echo one', 'hello'])
      await client.runs.wait(threadId, 'agent', { input: { messages: [{ role: 'user', content: text }] } });

    const spans = await turnSpans(harness.client, workflowIdFor(threadId));
    expect(spans.map((span) => span.text)).toEqual(['hello', 'run: echo one', 'hello']);
    const history = await harness.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();
    const completedActivities = history.events!.filter((event) => event.activityTaskCompletedEventAttributes);
    // One model call per plain turn, model → bash → model in the tool turn.
    expect(completedActivities).toHaveLength(5);
    for (const span of spans) {
      // Each turn's activities ran for some time, and the turn did more than run them.
      expect(span.activityMs).toBeGreaterThan(0);
      expect(span.activityMs).toBeLessThan(span.ms);
    }
  });
});
