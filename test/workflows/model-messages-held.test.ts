/**
 * Past 64 KiB a model call brings only the messages appended since the previous call
 * (`CallModelInput.appended`). A worker that holds the rest sends the model both without asking
 * the workflow; a worker that does not (restarted, another worker, a cleared cache) reads them
 * from the workflow. Either way the model is sent exactly the conversation the thread holds,
 * across continue-as-new too.
 */
import { toAnthropicMessages, withHistoryBreakpoint } from '../../activities/model/anthropic';
import { StepMessagesReader } from '../../activities/model-messages';
import { appendedMessagesLimit, inlineMessagesLimit } from '../../common/activities';
import type { Message, ModelMessage } from '../../common/transcript';
import { modelMessages } from '../../workflows/core/transcript';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { TestConversation } from '../helpers/conversation';
import { decryptedText } from '../helpers/encryption';
import { randomCjk } from '../helpers/random-text';
import { runsOf, startTestWorker } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(300_000);

/** What the Anthropic provider sends for a transcript (no compaction in this test). */
function requestFor(transcript: Message[]): string {
  return JSON.stringify(
    withHistoryBreakpoint(toAnthropicMessages(modelMessages({ transcript, compacted_messages: 0 } as never))),
  );
}

describe('a long conversation whose model calls bring only what was appended', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic({
      responder: () => ({ kind: 'message', content: [{ type: 'text', text: 'noted' }] }),
    });
  });
  let reader = new StepMessagesReader();
  const setup = workerHarness(() => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url }), {
    dependencies: { messages: reader },
  });
  afterAll(() => fake.close());

  it('sends the exact transcript from what the worker holds, across continue-as-new, and from the workflow after a restart or a cleared cache', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    // ~5,000 characters a turn: past 64 KiB after 13 turns, each turn's own well under the
    // 16 KiB that travel with a call.
    const said = (turn: number) => `turn ${turn} says ${randomCjk(5_000)}`;
    let turn = 0;
    /** One turn: what the reader did for it, after checking the model got exactly the thread. */
    const ask = async () => {
      turn++;
      const [asked, held] = [reader.pagesAsked, reader.heldAndAppended];
      const run = await conversation.ask(said(turn));
      expect(run.status).toBe('completed');
      const transcript = await conversation.transcript();
      const sent = JSON.stringify(fake.requests.at(-1)!.body.messages);
      expect(sent).toContain(`turn ${turn} says`);
      // Everything but the answer to this turn, in order, nothing more or less (compared whole,
      // reported short: the request is ~100,000 characters).
      const expected = requestFor(transcript.slice(0, -1));
      expect({ chars: sent.length, same: sent === expected }).toEqual({ chars: expected.length, same: true });
      return {
        chars: JSON.stringify(transcript.slice(0, -1)).length,
        pagesAsked: reader.pagesAsked - asked,
        heldAndAppended: reader.heldAndAppended - held,
      };
    };

    let read = await ask();
    while (read.chars <= inlineMessagesLimit) {
      // Inline: the reader is not involved at all.
      expect(read).toMatchObject({ pagesAsked: 0, heldAndAppended: 0 });
      read = await ask();
    }
    // The first call past 64 KiB: nothing held yet, so it is read from the workflow.
    expect(read).toMatchObject({ pagesAsked: 1, heldAndAppended: 0 });
    for (let hit = 0; hit < 14; hit++)
      expect(await ask()).toMatchObject({ pagesAsked: 0, heldAndAppended: 1 });

    // A cleared cache (a worker restarted in place) reads it again, and the next call holds it.
    reader.clear();
    // (In pages of 128K characters: two by now.)
    expect(await ask()).toMatchObject({ pagesAsked: 2, heldAndAppended: 0 });
    expect(await ask()).toMatchObject({ pagesAsked: 0, heldAndAppended: 1 });

    // A fresh worker, which has never seen the thread, the same.
    await setup.worker.stop();
    reader = new StepMessagesReader();
    setup.worker = await startTestWorker({ config: setup.config, dependencies: { messages: reader } });
    expect(await ask()).toMatchObject({ pagesAsked: 2, heldAndAppended: 0 });
    expect(await ask()).toMatchObject({ pagesAsked: 0, heldAndAppended: 1 });
    expect(fake.violations).toEqual([]);

    // It handed over along the way (the test server suggests it at 150 events, about a dozen
    // turns), and the calls after that still came from what the worker held.
    const runs = (await runsOf(setup.client, conversation.handle.workflowId)).map(
      (execution) => execution.runId,
    );
    expect(runs.length).toBeGreaterThan(1);

    // Every model call's input past 64 KiB brought its appended messages, small, and no whole transcript.
    let calls = 0;
    let runsWithCalls = 0;
    for (const runId of runs) {
      const before = calls;
      const history = await setup.client.workflow
        .getHandle(conversation.handle.workflowId, runId)
        .fetchHistory();
      for (const event of history.events ?? []) {
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled?.activityType?.name !== 'callModel') continue;
        const input = JSON.parse(await decryptedText(scheduled.input!.payloads![0]!)) as {
          messages?: ModelMessage[];
          appended?: { messages: ModelMessage[] };
        };
        if (input.messages !== undefined) continue;
        calls++;
        expect(input.appended).toBeDefined();
        expect(JSON.stringify(input.appended!.messages).length).toBeLessThanOrEqual(appendedMessagesLimit);
      }
      if (calls > before) runsWithCalls++;
    }
    expect(calls).toBeGreaterThan(14);
    // Those calls (all joined but the three that read) spanned more than one run.
    expect(runsWithCalls).toBeGreaterThan(1);
  });
});
