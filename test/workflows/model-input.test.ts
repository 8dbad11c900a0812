/**
 * A long conversation's messages stay out of the model activity's input: the activity reads them
 * from the workflow with the getModelMessages query, so the history does not grow by the whole
 * conversation at every step. The model must still receive exactly what it would have.
 */
import { inlineMessagesLimit } from '../../common/activities';
import * as messages from '../../common/messages';
import { type FakeAnthropic, startFakeAnthropic, toolUsingResponder } from '../fakes/anthropic-server';
import { TestConversation } from '../helpers/conversation';
import { decryptedText } from '../helpers/encryption';
import { workerHarness } from '../helpers/worker-harness';

describe('the model activity input', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic({ responder: toolUsingResponder });
  });
  const setup = workerHarness(() => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url }));
  afterAll(() => fake.close());

  /** The callModel inputs the workflow scheduled, as JSON text (stored encrypted). */
  async function scheduledModelInputs(conversation: TestConversation): Promise<string[]> {
    const history = await conversation.handle.fetchHistory();
    return Promise.all(
      (history.events ?? [])
        .map((event) => event.activityTaskScheduledEventAttributes)
        .filter((attributes) => attributes?.activityType?.name === 'callModel')
        .map((attributes) => decryptedText(attributes!.input!.payloads![0]!)),
    );
  }

  it('carries short conversations inline and reads long ones from the workflow, sending the model the same messages', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    const short = await conversation.ask('run: echo short');
    expect(short.status).toBe('completed');
    const long = 'word '.repeat(Math.ceil(inlineMessagesLimit / 5) + 100);
    const before = fake.requests.length;
    const run = await conversation.ask(`run: echo long\n${long}`);
    expect(run.status).toBe('completed');
    // Model → tool → model for the long turn: both requests carried the whole conversation.
    const requests = fake.requests.slice(before);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(JSON.stringify(request.body.messages)).toContain(long.trim());
      expect(request.body.messages[0]).toMatchObject({ role: 'user' });
    }
    expect(fake.violations).toEqual([]);
    const inputs = await scheduledModelInputs(conversation);
    expect(inputs).toHaveLength(4);
    const whole = (input: string) => (JSON.parse(input) as { messages?: unknown }).messages !== undefined;
    expect(inputs.slice(0, 2).every(whole)).toBe(true);
    expect(inputs.slice(2).some(whole)).toBe(false);
    // The long turn's first call brings nothing of it (its question alone is too large); the
    // second, only the tool call and its result (decision 0295).
    expect(inputs[2]).not.toContain('"appended"');
    expect(inputs[3]).toContain('"appended"');
    expect(Math.max(...inputs.slice(2).map((input) => input.length))).toBeLessThan(1_000);
  });

  it('refuses the messages of a step that is no longer current', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config);
    const run = await conversation.ask('hello');
    await expect(
      conversation.handle.query(messages.getModelMessagesQuery, { run_id: run.run_id, step: 1 }),
    ).rejects.toThrow(/ModelStepNotCurrent/);
  });
});
