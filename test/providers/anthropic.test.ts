/**
 * What only Anthropic's protocol has, at full fidelity (real SDK against the fake Messages API):
 * cache breakpoints, same-role merging, pings, and its own stop reasons and errors beside what
 * every provider passes (every-provider.test.ts).
 */
import type { ModelMessage } from '../../common/transcript';
import { anthropic, providerHarness, requestFor } from './provider-cases';
import { failureOf } from './provider-helpers';

const request = requestFor(anthropic);

describe('the Anthropic provider at full fidelity (real SDK against the fake Messages API)', () => {
  const provider = providerHarness(anthropic);

  afterEach(() => {
    // No request here may break the tool_use/tool_result rule.
    expect(provider.fake.violations).toEqual([]);
  });

  it('sends the system prompt and tools with cache breakpoints, streaming, and merges same-role messages', async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'user', content: [{ type: 'text', text: 'second (after a failed run)' }] },
    ];
    await provider.model.complete(request({ messages }));
    const sent = provider.fake.requests[0]!.body;
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
    expect(provider.fake.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('keeps a thinking model alive through ping events', async () => {
    provider.fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'after a long think' }],
      firstTokenDelayMs: 2_500,
    });
    const reply = await provider.model.complete(request());
    expect(reply.content).toEqual([{ type: 'text', text: 'after a long think' }]);
  });

  it('reports tool_use with the parallel calls', async () => {
    provider.fake.enqueue({
      kind: 'message',
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
        { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'pwd' } },
      ],
    });
    const reply = await provider.model.complete(request());
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
    provider.fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'There is a.txt.' }],
      usage: {
        input_tokens: 12,
        output_tokens: 5,
        cache_creation_input_tokens: 800,
        cache_read_input_tokens: 1_200,
      },
    });
    const reply = await provider.model.complete(request({ messages }));
    expect(reply.usage).toEqual({
      input_tokens: 12,
      output_tokens: 5,
      cache_creation_input_tokens: 800,
      cache_read_input_tokens: 1_200,
    });
    const sent = provider.fake.requests[0]!.body.messages;
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
    const breakpoints = JSON.stringify(provider.fake.requests[0]!.body).match(/cache_control/g) ?? [];
    expect(breakpoints).toHaveLength(3);
  });

  it('puts no history breakpoint on a first message', async () => {
    await provider.model.complete(request());
    expect(JSON.stringify(provider.fake.requests[0]!.body.messages)).not.toContain('cache_control');
  });

  it('fails a 400 for good with the API message', async () => {
    provider.fake.enqueue({
      kind: 'error',
      status: 400,
      type: 'invalid_request_error',
      message: 'prompt is too long: 210000 tokens > 200000 maximum',
    });
    const failure = await failureOf(provider.model.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
    expect(failure.message).toContain('prompt is too long: 210000 tokens > 200000 maximum');
  });

  it('honours a 529 retry-after and a 500 as retryable', async () => {
    provider.fake.enqueue(
      {
        kind: 'error',
        status: 529,
        type: 'overloaded_error',
        message: 'Overloaded',
        headers: { 'retry-after': '4' },
      },
      { kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' },
    );
    expect(await failureOf(provider.model.complete(request()))).toMatchObject({
      type: 'ModelOverloaded',
      nonRetryable: false,
      nextRetryDelay: 4_000,
    });
    expect(await failureOf(provider.model.complete(request()))).toMatchObject({
      type: 'ModelUnavailable',
      nonRetryable: false,
    });
  });
});
