import { AnthropicModel } from '../../activities/model/anthropic';
import type { ModelMessage } from '../../common/transcript';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { failureOf, modelRequest } from './provider-helpers';
import { itBehavesLikeAProvider } from './provider-suite';

const request = (overrides: Parameters<typeof modelRequest>[1] = {}) =>
  modelRequest('claude-sonnet-4-5', overrides);

describe('the Anthropic provider (real SDK against the fake Messages API)', () => {
  let fake: FakeAnthropic;
  let model: AnthropicModel;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    model = new AnthropicModel({ apiKey: 'test-key', baseURL: fake.url, stallTimeoutMs: 1_500 });
  });

  afterEach(async () => {
    // No request in any provider test may break the tool_use/tool_result rule, except where a test says so.
    await fake.close();
  });

  itBehavesLikeAProvider(() => ({ fake, model, request }), { silentFromTheStart: false });

  it('streams text as it arrives and reports the stop reason and usage', async () => {
    fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'Hello there, streaming friend.' }],
      usage: { input_tokens: 42, output_tokens: 7, cache_read_input_tokens: 30 },
      tokenDelayMs: 5,
    });
    const deltas: string[] = [];
    const reply = await model.complete(request({ onTextDelta: (text) => deltas.push(text) }));
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('Hello there, streaming friend.');
    expect(reply).toMatchObject({
      content: [{ type: 'text', text: 'Hello there, streaming friend.' }],
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 42,
        output_tokens: 7,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 0,
      },
      model: 'claude-sonnet-4-5',
    });
    expect(fake.violations).toEqual([]);
  });

  it('parses parallel tool_use blocks whose input JSON arrives split across deltas', async () => {
    fake.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'Two things at once.' },
        {
          type: 'tool_use',
          id: 'toolu_01A',
          name: 'bash',
          input: { command: 'ls -la /tmp && echo "quoted \\"text\\""' },
        },
        { type: 'tool_use', id: 'toolu_01B', name: 'read_file', input: { path: 'notes/today.md' } },
      ],
    });
    const reply = await model.complete(request());
    expect(reply.stop_reason).toBe('tool_use');
    expect(reply.content.slice(1)).toEqual([
      {
        type: 'tool_use',
        id: 'toolu_01A',
        name: 'bash',
        input: { command: 'ls -la /tmp && echo "quoted \\"text\\""' },
      },
      { type: 'tool_use', id: 'toolu_01B', name: 'read_file', input: { path: 'notes/today.md' } },
    ]);
  });

  it('sends the system prompt and tools with cache breakpoints, streaming, and merges same-role messages', async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'user', content: [{ type: 'text', text: 'second (after a failed run)' }] },
    ];
    await model.complete(request({ messages }));
    const sent = fake.requests[0]!.body;
    expect(sent.stream).toBe(true);
    expect(sent.system).toEqual([
      { type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(sent.tools?.map((tool) => tool.name)).toEqual(['bash', 'read_file']);
    expect(sent.tools?.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second (after a failed run)' },
        ],
      },
    ]);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('leaves retries to Temporal: a 500 is one request and a retryable failure', async () => {
    fake.enqueue({ kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' });
    const failure = await failureOf(model.complete(request()));
    expect(fake.requests).toHaveLength(1);
    expect(failure).toMatchObject({ type: 'ModelUnavailable', nonRetryable: false });
  });

  it('turns a 429 retry-after into the next retry delay', async () => {
    fake.enqueue({
      kind: 'error',
      status: 429,
      type: 'rate_limit_error',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
      headers: { 'retry-after': '7' },
    });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelRateLimited', nonRetryable: false, nextRetryDelay: 7_000 });
  });

  it.each([
    [529, 'overloaded_error', 'Overloaded', 'ModelOverloaded', false],
    [408, 'timeout_error', 'Request timeout', 'ModelUnavailable', false],
    [400, 'invalid_request_error', 'max_tokens: must be at least 1', 'ModelRequestInvalid', true],
    [401, 'authentication_error', 'invalid x-api-key', 'ModelAuthenticationFailed', true],
    [404, 'not_found_error', 'model: claude-nope', 'ModelRequestInvalid', true],
    [
      429,
      'rate_limit_error',
      'You have reached your specified API usage limits (monthly spend limit)',
      'ModelSpendLimitReached',
      true,
    ],
  ])(
    'maps HTTP %i %s to %s (non-retryable: %s)',
    async (status, type, message, failureType, nonRetryable) => {
      fake.enqueue({ kind: 'error', status, type, message });
      const failure = await failureOf(model.complete(request()));
      expect(failure).toMatchObject({ type: failureType, nonRetryable });
      expect(failure.message).toContain(message);
      if (status === 401) expect(failure.message).toContain('check ANTHROPIC_API_KEY');
    },
  );

  it('retries a stream that fails midway with overloaded_error', async () => {
    fake.enqueue({ kind: 'stream-error', type: 'overloaded_error', message: 'Overloaded', afterDeltas: 2 });
    const deltas: string[] = [];
    const failure = await failureOf(model.complete(request({ onTextDelta: (text) => deltas.push(text) })));
    expect(deltas.length).toBe(2);
    expect(failure).toMatchObject({ type: 'ModelOverloaded', nonRetryable: false });
  });

  it('keeps a thinking model alive through ping events', async () => {
    fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'after a long think' }],
      firstTokenDelayMs: 2_500,
    });
    const reply = await model.complete(request());
    expect(reply.content).toEqual([{ type: 'text', text: 'after a long think' }]);
  });

  it("answers a history with an orphaned tool_use with Anthropic's own 400, which fails for good", async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_orphan', name: 'bash', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'where is my result?' }] },
    ];
    const failure = await failureOf(model.complete(request({ messages })));
    expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
    expect(failure.message).toContain(
      '`tool_use` ids were found without `tool_result` blocks immediately after: toolu_orphan',
    );
    expect(fake.violations).toHaveLength(1);
  });
});
