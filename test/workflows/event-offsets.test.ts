/**
 * The offset a run's events start at is counted as events are appended (not by copying the log):
 * it must stay the log's true length with events published by signal (deduplicated by publisher
 * and sequence), across continue-as-new, and when every workflow task replays from the start.
 */
import { temporal } from '@temporalio/proto';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { PublishInput } from '@temporalio/workflow-streams/client';
import { eventsTopic, runIdOf, type KeelEvent } from '../../common/events';
import { TestConversation } from '../helpers/conversation';
import { runsOf } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(300_000);

const publishSignal = '__temporal_workflow_stream_publish';
const offsetQuery = '__temporal_workflow_stream_offset';

const wire = (text: string): string =>
  Buffer.from(
    temporal.api.common.v1.Payload.encode({
      metadata: { encoding: Buffer.from('json/plain') },
      data: Buffer.from(JSON.stringify(text)),
    }).finish(),
  ).toString('base64');

/** The first event at or after `offset` on the conversation's events topic. */
async function eventAt(
  conversation: TestConversation,
  offset: number,
): Promise<{ offset: number; event: KeelEvent }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 60_000);
  try {
    return await conversation.client.withAbortSignal(controller.signal, async () => {
      const stream = WorkflowStreamClient.create(conversation.client, conversation.handle.workflowId);
      for await (const item of stream.topic<KeelEvent>(eventsTopic).subscribe(offset))
        return { offset: item.offset, event: item.data };
      throw new Error(`no event at ${offset}`);
    });
  } finally {
    clearTimeout(timer);
  }
}

describe("a run's first event offset", () => {
  // Every workflow task replays the whole history: the count is rebuilt on replay each time.
  const setup = workerHarness(() => ({}), { maxCachedWorkflows: 0 });

  it('is the log’s length when the run is taken, with signalled and duplicate publishes, across continue-as-new', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config);
    let sequence = 0;
    let runs = 1;
    // The test server suggests continue-as-new at 150 events: about a dozen turns.
    for (let turn = 1; turn <= 40 && runs < 3; turn++) {
      // Events published from outside (as an activity's deltas are), and one sent twice: the
      // second is a duplicate the log skips.
      sequence++;
      const start = await conversation.handle.query<number>(offsetQuery);
      const input: PublishInput = {
        items: [
          { topic: 'test-extra', data: wire(`extra ${turn}.1`) },
          { topic: 'test-extra', data: wire(`extra ${turn}.2`) },
        ],
        publisher_id: 'test-publisher',
        sequence,
      };
      await conversation.handle.signal(publishSignal, input);
      await conversation.handle.signal(publishSignal, input);
      const before = await conversation.handle.query<number>(offsetQuery);
      expect(before).toBe(start + 2);
      const run = await conversation.ask(`turn ${turn}: hello`);
      expect(run.status).toBe('completed');
      // The old computation (the log's length, which the stream's own query answers) on an idle thread.
      expect(run.first_event_offset).toBe(before);
      // And the event there is this run's first.
      const first = await eventAt(conversation, run.first_event_offset!);
      expect(first.offset).toBe(run.first_event_offset);
      expect(first.event.event).toBe('run.created');
      expect(runIdOf(first.event)).toBe(run.run_id);
      runs = (await runsOf(setup.client, conversation.handle.workflowId)).length;
    }
    expect(runs).toBeGreaterThanOrEqual(3);
  });
});
