import { type FakeAnthropic, startFakeAnthropic, toolUsingResponder } from '../fakes/anthropic-server';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';
import { workerHarness } from '../helpers/worker-harness';

describe('a conversation with the Anthropic provider (fake Messages API, real SDK, real Temporal)', () => {
  let fake: FakeAnthropic;
  const model = { model: 'anthropic:claude-sonnet-4-5' };

  beforeAll(async () => {
    fake = await startFakeAnthropic({ responder: toolUsingResponder });
  });
  const setup = workerHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    KEEL_MODEL: 'anthropic:claude-sonnet-4-5',
  }));
  afterAll(() => fake.close());

  afterEach(() => {
    // The fake answers any history that breaks the tool rule with Anthropic's 400: that must never happen.
    expect(fake.violations).toEqual([]);
  });

  it('runs the tool loop: parallel tool_use blocks, bash activities, and an answer that reads the results', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, model);
    const before = fake.requests.length;
    const run = await conversation.ask('run: echo alpha\nrun: echo beta');
    expect(run).toMatchObject({ status: 'completed', steps: 2 });
    const transcript = await conversation.transcript();
    expect(toolResults(transcript).map((result) => result.content)).toEqual(['alpha\n', 'beta\n']);
    expect(lastAnswer(transcript)).toBe('Result: alpha\n\nResult: beta\n');
    expect(run.usage.input_tokens).toBeGreaterThan(0);
    expect(run.usage.cost_usd).toBeGreaterThan(0);
    // The second request carried the assistant's tool_use and the results right after it.
    const second = fake.requests[before + 1]!.body;
    expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.tools?.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['bash', 'read_file', 'write_file']),
    );
  });

  it('waits as long as retry-after says before the next attempt, then completes', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, model);
    const before = fake.requests.length;
    fake.enqueue({
      kind: 'error',
      status: 429,
      type: 'rate_limit_error',
      message: 'slow down',
      headers: { 'retry-after': '2' },
    });
    const run = await conversation.ask('hello');
    expect(run.status).toBe('completed');
    const [limited, retried] = fake.requests.slice(before);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(1_900);
  });

  it('fails the run at once on a non-retryable 401, with a message that names the key', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, model);
    const before = fake.requests.length;
    fake.enqueue({ kind: 'error', status: 401, type: 'authentication_error', message: 'invalid x-api-key' });
    const run = await conversation.ask('hello');
    expect(run).toMatchObject({ status: 'failed', error: { type: 'ModelAuthenticationFailed' } });
    expect(run.error!.message).toContain('check ANTHROPIC_API_KEY');
    expect(fake.requests.length - before).toBe(1);
  });
});
