/**
 * A waited run's answer brings the values its caller needs (decision 0255): the messages the API
 * does not hold yet and, while the run waits on a human, the pending approvals, so no query
 * follows the update. The answer must be byte for byte the one the queries give (an API that
 * never asks for them, as with a worker of an earlier release), and values too large to carry
 * are read by query as before.
 */
import { randomUUID } from 'node:crypto';
import type { RunningApi } from '../../api/server';
import { apiHarness, startTestApi, userInput, wholeValues as wholeValuesOf } from '../helpers/api';
import { countCalls } from '../helpers/temporal-calls';

jest.setTimeout(300_000);

describe("a waited run's answer carries its values", () => {
  const harness = apiHarness(() => ({ KEEL_LOCAL_MODEL_CALLS: '1' }));
  /** The same API, except that it never asks the update for the values. */
  let querying: RunningApi;
  beforeAll(async () => {
    querying = await startTestApi(harness.client, {
      ...harness.config,
      api: { ...harness.config.api, waitValuesChars: 0 },
    });
  });
  afterAll(async () => {
    await querying?.stop();
  });

  const wait = async (base: string, threadId: string, body: unknown) =>
    countCalls(harness.client, async () => {
      const response = await fetch(`${base}/threads/${threadId}/runs/wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    });

  const wholeValues = (threadId: string): Promise<string> => wholeValuesOf(harness.client, threadId);

  it('answers without a query, byte for byte as the API that queries, turn after turn', async () => {
    const threadId = randomUUID();
    const turns = ['hello', 'run: echo carried', 'and again', 'run: echo twice', 'bye'];
    for (const [index, text] of turns.entries()) {
      // Every other turn through the API that queries: both keep their own copy of the thread.
      const viaQueries = index % 2 === 1;
      const [answer, calls] = await wait(
        viaQueries ? querying.url : harness.base,
        threadId,
        userInput(text, index === 0 ? { if_not_exists: 'create' } : {}),
      );
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(await wholeValues(threadId));
      // The update (with the thread's start on the first turn), its result when the acceptance did
      // not bring it, and the thread's description (its owner and existence check). On a loaded
      // machine a fresh API whose input is not accepted within the intake's 250 ms also sends it
      // by signal (with the thread's start on the first turn), the durable intake's fallback
      // (decisions 0012, 0300), and that run's values are then read by one query. Nothing else.
      const bySignal = calls.has('signalWorkflowExecution') || calls.has('signalWithStartWorkflowExecution');
      expect(calls.get('queryWorkflow') ?? 0).toBe(viaQueries || bySignal ? 1 : 0);
      expect(calls.get('updateWorkflowExecution') ?? calls.get('executeMultiOperation')).toBe(1);
      const asked = [...calls.keys()].filter((name) => name !== 'queryWorkflow').sort();
      for (const name of asked)
        expect([
          'describeWorkflowExecution',
          'executeMultiOperation',
          'pollWorkflowExecutionUpdate',
          'signalWorkflowExecution',
          'signalWithStartWorkflowExecution',
          'updateWorkflowExecution',
        ]).toContain(name);
    }
  });

  it('reads values too large to carry by query, the same answer', async () => {
    const threadId = randomUUID();
    const [first] = await wait(harness.base, threadId, userInput('short', { if_not_exists: 'create' }));
    expect(first.status).toBe(200);
    // About 24,000 characters of JSON: past the 16 KiB the update may carry.
    const long = `"quoted" ü 漢 ${'lorem ipsum '.repeat(2_000)}`;
    const [answer, calls] = await wait(harness.base, threadId, userInput(long));
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(await wholeValues(threadId));
    expect(calls.get('queryWorkflow')).toBe(1);
    // And the next small turn is carried again, on top of what the query read.
    const [next, nextCalls] = await wait(harness.base, threadId, userInput('run: echo small'));
    expect(next.text).toBe(await wholeValues(threadId));
    expect(nextCalls.get('queryWorkflow') ?? 0).toBe(0);
  });

  it('brings the pending approvals of a run that waits on a human, the same answer', async () => {
    const answers: string[] = [];
    const runId = randomUUID();
    for (const base of [harness.base, querying.url]) {
      const threadId = randomUUID();
      const created = await fetch(`${base}/threads`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ thread_id: threadId, config: { approval: 'require' } }),
      });
      expect(created.status).toBe(200);
      const [answer, calls] = await wait(base, threadId, userInput('run: echo ask first', { run_id: runId }));
      expect(answer.status).toBe(200);
      const values = JSON.parse(answer.text) as { __interrupt__?: unknown[] };
      expect(values.__interrupt__).toHaveLength(1);
      expect(calls.get('queryWorkflow') ?? 0).toBe(base === harness.base ? 0 : 2);
      // The same run id in both threads, so the same approval ids; only the deadline differs.
      answers.push(answer.text.replace(/by \d{4}-\d\d-\d\dT[\d:.]+Z/, 'by (deadline)'));
    }
    expect(answers[0]).toBe(answers[1]);
  });
});
