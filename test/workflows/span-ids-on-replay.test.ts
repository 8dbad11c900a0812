/**
 * On a worker that exports spans, the workflow's spans draw their ids from the run's own seeded
 * stream (decision 0290), so a replay (the next worker after a crash, a cache eviction) makes the
 * ones the live run made: a span still open when a
 * worker dies (the `StartActivity` of a model call in flight) ends on the next worker under the
 * id its activity's retry names as parent. Update validators and queries run only on a live
 * worker, never in a replay; their spans must not draw from that stream, or every later id of a
 * replay differs from the live run's (decision 0255).
 */
import { readFile } from 'node:fs/promises';
import { Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import { loadDataConverter } from '../../codec/data-converter';
import { WorkerMetrics } from '../../telemetry/worker-metrics';
import { codeForWorker } from '../../worker/workflow-bundle';
import { TestConversation } from '../helpers/conversation';
import { inMemoryTracing } from '../helpers/tracing';
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
    const live = history
      .events!.map((event) => event.activityTaskScheduledEventAttributes?.header?.fields?.['_tracer-data'])
      .filter((payload) => payload !== undefined && payload !== null)
      .map((payload) => {
        const { traceparent } = defaultPayloadConverter.fromPayload<{ traceparent: string }>(payload);
        return traceparent.split('-')[2]!;
      });
    expect(live.length).toBeGreaterThanOrEqual(6);
    // The live worker exported them as it scheduled the activities.
    const exported = tracing.spans().filter((span) => span.name.startsWith('StartActivity:'));
    expect(live.every((id) => exported.some((span) => span.spanContext().spanId === id))).toBe(true);
    // The replay's, on a worker that traces too: the scheduling spans it ends, handed to a sink
    // that is called during replay.
    const replayed: string[] = [];
    await Worker.runReplayHistory(
      {
        workflowBundle: { code: codeForWorker(await readFile(process.env.KEEL_TEST_BUNDLE!, 'utf8'), true) },
        dataConverter: await loadDataConverter(setup.config.encryption),
        sinks: {
          ...new WorkerMetrics().sinks(),
          exporter: {
            export: {
              fn: (_info, spans: SerializableSpan[]) => {
                for (const span of spans)
                  if (span.name.startsWith('StartActivity:')) replayed.push(span.spanContext.spanId);
              },
              callDuringReplay: true,
            },
          },
        },
      },
      history,
      conversation.handle.workflowId,
    );
    expect(replayed.sort()).toEqual(live.sort());
  });
});
