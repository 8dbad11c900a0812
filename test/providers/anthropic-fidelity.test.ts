import { AnthropicModel } from '../../activities/model/anthropic';
import type { ModelMessage } from '../../common/transcript';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { failureOf, modelRequest } from './provider-helpers';

const request = (overrides: Parameters<typeof modelRequest>[1] = {}) =>
  modelRequest('claude-sonnet-4-5', overrides);

describe('the Anthropic provider at full fidelity (real SDK against the fake Messages API)', () => {
  let fake: FakeAnthropic;
  let model: AnthropicModel;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    model = new AnthropicModel({ apiKey: 'test-key', baseURL: fake.url, stallTimeoutMs: 1_500 });
  });

  afterEach(async () => {
    expect(fake.violations).toEqual([]);
    await fake.close();
  });

  it.each(['end_turn', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal'] as const)(
    'reports stop reason %s as the API sent it',
    async (stopReason) => {
      fake.enqueue({
        kind: 'message',
        content: [{ type: 'text', text: 'partial or whole' }],
        stop_reason: stopReason,
      });
      const reply = await model.complete(request());
      expect(reply).toMatchObject({
        stop_reason: stopReason,
        content: [{ type: 'text', text: 'partial or whole' }],
      });
    },
  );

  it('reports tool_use with the parallel calls', async () => {
    fake.enqueue({
      kind: 'message',
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
        { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'pwd' } },
      ],
    });
    const reply = await model.complete(request());
    expect(reply.stop_reason).toBe('tool_use');
    expect(reply.content).toHaveLength(2);
  });

  it('caches the stable prefix: a breakpoint on the last block of the previous turn, and reports cache writes and reads', async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'run ls' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
    ];
    fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'There is a.txt.' }],
      usage: {
        input_tokens: 12,
        output_tokens: 5,
        cache_creation_input_tokens: 800,
        cache_read_input_tokens: 1_200,
      },
    });
    const reply = await model.complete(request({ messages }));
    expect(reply.usage).toEqual({
      input_tokens: 12,
      output_tokens: 5,
      cache_creation_input_tokens: 800,
      cache_read_input_tokens: 1_200,
    });
    const sent = fake.requests[0]!.body.messages;
    expect(sent[1]!.content).toEqual([
      {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'bash',
        input: { command: 'ls' },
        cache_control: { type: 'ephemeral' },
      },
    ]);
    // The newest message and earlier ones carry no breakpoint: four is the API's limit.
    expect(JSON.stringify(sent[0])).not.toContain('cache_control');
    expect(JSON.stringify(sent[2])).not.toContain('cache_control');
    const breakpoints = JSON.stringify(fake.requests[0]!.body).match(/cache_control/g) ?? [];
    expect(breakpoints).toHaveLength(3);
  });

  it('puts no history breakpoint on a first message', async () => {
    await model.complete(request());
    expect(JSON.stringify(fake.requests[0]!.body.messages)).not.toContain('cache_control');
  });

  it('abandons a request that hangs before its first byte and retries it', async () => {
    fake.enqueue({ kind: 'hang' });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelStreamStalled', nonRetryable: false });
    expect(failure.message).toContain('no data from Anthropic for 1.5 s');
  });

  it('fails a 400 for good with the API message', async () => {
    fake.enqueue({
      kind: 'error',
      status: 400,
      type: 'invalid_request_error',
      message: 'prompt is too long: 210000 tokens > 200000 maximum',
    });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
    expect(failure.message).toContain('prompt is too long: 210000 tokens > 200000 maximum');
  });

  it('honours a 529 retry-after and a 500 as retryable', async () => {
    fake.enqueue(
      {
        kind: 'error',
        status: 529,
        type: 'overloaded_error',
        message: 'Overloaded',
        headers: { 'retry-after': '4' },
      },
      { kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' },
    );
    expect(await failureOf(model.complete(request()))).toMatchObject({
      type: 'ModelOverloaded',
      nonRetryable: false,
      nextRetryDelay: 4_000,
    });
    expect(await failureOf(model.complete(request()))).toMatchObject({
      type: 'ModelUnavailable',
      nonRetryable: false,
    });
  });
});
