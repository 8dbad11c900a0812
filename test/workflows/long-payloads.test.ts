/**
 * A long conversation never puts the whole conversation in one Temporal payload: the model
 * activity reads it in pages (keeping what it read), the API reads the transcript in pages, and
 * continue-as-new carries the state in parts. Every payload any of its runs stored stays under
 * the 512 KiB at which the server warns, and the conversation goes on correctly across the
 * hand-overs: the model is sent every message the thread holds.
 */
import type { temporal } from '@temporalio/proto';
import { toAnthropicMessages, withHistoryBreakpoint } from '../../activities/model/anthropic';
import { TranscriptReader } from '../../api/gateway/transcript-reader';
import { limits } from '../../common/limits';
import * as messages from '../../common/messages';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { TestConversation } from '../helpers/conversation';
import { runsOf } from '../helpers/temporal';
import { randomCjk } from '../helpers/random-text';
import { workerHarness } from '../helpers/worker-harness';
import { modelMessages } from '../../workflows/core/transcript';

jest.setTimeout(300_000);

const warningLimit = 512 * 1024;

/** Every payload in a history event, with the bytes it stores. */
function payloadSizes(value: unknown, found: number[] = []): number[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return found;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && 'metadata' in record) {
    found.push(record.data.length);
    return found;
  }
  for (const child of Object.values(record)) payloadSizes(child, found);
  return found;
}

describe('a conversation larger than any payload may be', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic({
      responder: () => ({ kind: 'message', content: [{ type: 'text', text: 'noted' }] }),
    });
  });
  const setup = workerHarness(() => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url }));
  afterAll(() => fake.close());

  it('keeps every payload of every run under 512 KiB, and still sends the model the whole conversation after continuing as new', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    // 14 turns of ~100,000 characters, three bytes each in UTF-8: 4 MB said, and the transcript
    // (compacted at ~600,000 characters) never under 1 MiB once it has been compacted. Drawn at
    // random, so that compressed (decision 0250) it still is.
    const turns = 14;
    const said = (turn: number) => `turn ${turn} says ${randomCjk(limits.maxInputChars - 40)}`;
    const compacted = async () => {
      const [thread, transcript] = await Promise.all([conversation.thread(), conversation.transcript()]);
      return { transcript, count: thread.messages_count - transcript.length };
    };
    for (let turn = 1; turn <= turns; turn++) {
      const before = await compacted();
      const run = await conversation.ask(said(turn));
      expect(run.status).toBe('completed');
      // The model got exactly what the thread held for it then, however it was read.
      const sent = JSON.stringify(fake.requests.at(-1)!.body.messages);
      expect(sent).toContain(`turn ${turn} says`);
      const after = await compacted();
      const held = (state: { transcript: unknown[]; count: number }) =>
        JSON.stringify(
          withHistoryBreakpoint(
            toAnthropicMessages(
              modelMessages({ transcript: state.transcript, compacted_messages: state.count } as never),
            ),
          ),
        );
      if (after.count === before.count)
        expect(sent).toBe(held({ ...after, transcript: after.transcript.slice(0, -1) }));
      else {
        // Compacted this turn: before its question or after its answer.
        const question = after.transcript.slice(0, -1);
        const candidates = [
          held({ ...after, transcript: question }),
          held({ ...before, transcript: [...before.transcript, ...question.slice(-1)] }),
        ];
        expect(candidates).toContain(sent);
      }
    }
    expect(fake.violations).toEqual([]);

    const executions = (await runsOf(setup.client, conversation.handle.workflowId)).map(
      (execution) => execution.runId,
    );
    // It handed over at least once, carrying its state in parts.
    expect(executions.length).toBeGreaterThan(1);
    let carriedInParts = false;
    let largest = 0;
    let largestCarried = 0;
    for (const runId of executions) {
      const history = await setup.client.workflow
        .getHandle(conversation.handle.workflowId, runId)
        .fetchHistory();
      for (const event of history.events ?? []) {
        largest = Math.max(largest, ...payloadSizes(event));
        const started: temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes | null | undefined =
          event.workflowExecutionStartedEventAttributes;
        if ((started?.input?.payloads?.length ?? 0) > 1) carriedInParts = true;
        if (started !== undefined && started !== null)
          largestCarried = Math.max(
            largestCarried,
            payloadSizes(started.input).reduce((a, b) => a + b, 0),
          );
      }
    }
    expect(carriedInParts).toBe(true);
    // What was carried would not have fit in one payload.
    expect(largestCarried).toBeGreaterThan(warningLimit);
    expect(largest).toBeGreaterThan(100_000);
    expect(largest).toBeLessThan(warningLimit);

    // The API's paged read gives the transcript whole, and again (from what it kept) after one more turn.
    const reader = new TranscriptReader({ pageChars: 150_000 });
    const whole = await conversation.transcript();
    expect(JSON.stringify(whole).length).toBeGreaterThan(400_000);
    expect(await reader.read(conversation.threadId, conversation.handle)).toEqual(whole);
    expect((await conversation.ask('one more: short')).status).toBe('completed');
    expect(await reader.read(conversation.threadId, conversation.handle)).toEqual(
      await conversation.transcript(),
    );
    // Each page is bounded.
    const page = await conversation.handle.query(messages.getTranscriptPageQuery, {
      max_chars: messages.readPageChars,
    });
    expect(page.more).toBe(true);
    expect(JSON.stringify(page.messages).length).toBeLessThan(
      messages.readPageChars + limits.maxInputChars + 1_000,
    );
  });
});
