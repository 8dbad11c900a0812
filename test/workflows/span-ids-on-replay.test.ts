/**
 * On a worker that exports spans, the workflow's spans draw their ids from the run's own seeded
 * stream (decision 0290), so a replay (the next worker after a crash, a cache eviction) makes the
 * ones the live run made: a span still open when a
 * worker dies (the `StartActivity` of a model call in flight) ends on the next worker under the
 * id its activity's retry names as parent. Update validators and queries run only on a live
 * worker, never in a replay; their spans must not draw from that stream, or every later id of a
 * replay differs from the live run's (decision 0255).
 */
import { TestConversation } from '../helpers/conversation';
import { inMemoryTracing, replaySchedulingSpans, scheduledSpanIds } from '../helpers/tracing';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(120_000);

describe("the workflow's span ids on replay", () => {
  const tracing = inMemoryTracing();
  const setup = workerHarness(undefined, { tracing });

  it('are the ones the live run gave, though updates were validated and queries answered live', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config);
    for (const text of ['run: echo one', 'run: echo two']) {
      // Each turn's input is an update its validator took; reads in between are queries.
      expect(await conversation.ask(text)).toMatchObject({ status: 'completed' });
      await conversation.transcript();
      await conversation.thread();
    }
    const history = await conversation.handle.fetchHistory();
    // The live ids: each activity carries its scheduling span's context in its header.
    const live = scheduledSpanIds(history.events!).filter((id): id is string => id !== undefined);
    expect(live.length).toBeGreaterThanOrEqual(6);
    // The live worker exported them as it scheduled the activities.
    const exported = tracing.spans().filter((span) => span.name.startsWith('StartActivity:'));
    expect(live.every((id) => exported.some((span) => span.spanContext().spanId === id))).toBe(true);
    // The replay's, on a worker that traces too.
    const replayed = await replaySchedulingSpans({
      tracing: true,
      history,
      workflowId: conversation.handle.workflowId,
      encryption: setup.config.encryption,
    });
    expect(replayed.sort()).toEqual(live.sort());
  });
});
