import { OpenAIModel } from '../../activities/model/openai';
import { TextToolsFallback } from '../../activities/model/text-tools';
import type { ModelMessage } from '../../common/transcript';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server';
import { failureOf, modelRequest, toolRoundTrip } from './provider-helpers';
import { itBehavesLikeAProvider } from './provider-suite';

const request = (overrides: Parameters<typeof modelRequest>[1] = {}) => modelRequest('gpt-4.1', overrides);

describe('the OpenAI-compatible provider (real openai client against the fake Chat Completions API)', () => {
  let fake: FakeOpenAI;
  let model: OpenAIModel;

  beforeEach(async () => {
    fake = await startFakeOpenAI({ toollessModels: ['gemma:2b'] });
    model = new OpenAIModel({ apiKey: 'test-key', baseURL: `${fake.url}/v1`, stallTimeoutMs: 1_500 });
  });

  afterEach(async () => {
    await fake.close();
  });

  itBehavesLikeAProvider(() => ({ fake, model, request }));

  it('streams text as it arrives and maps usage, cached tokens and the model', async () => {
    fake.enqueue({
      kind: 'message',
      text: 'Hello there, streaming friend.',
      usage: { prompt_tokens: 50, completion_tokens: 7, cached_tokens: 30 },
      tokenDelayMs: 5,
    });
    const deltas: string[] = [];
    const reply = await model.complete(request({ onTextDelta: (text) => deltas.push(text) }));
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('Hello there, streaming friend.');
    expect(reply).toEqual({
      content: [{ type: 'text', text: 'Hello there, streaming friend.' }],
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 20,
        output_tokens: 7,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 0,
      },
      model: 'gpt-4.1',
    });
    const sent = fake.requests[0]!.body;
    expect(sent).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 1024,
    });
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
    expect(sent.tools?.map((tool) => tool.function.name)).toEqual(['bash', 'read_file']);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('assembles parallel tool calls whose arguments arrive split across chunks', async () => {
    fake.enqueue({
      kind: 'message',
      text: 'Two things at once.',
      tool_calls: [
        { name: 'bash', arguments: { command: 'ls -la /tmp && echo "quoted \\"text\\""' } },
        { name: 'read_file', arguments: { path: 'notes/today.md' } },
      ],
    });
    const reply = await model.complete(request());
    expect(reply.stop_reason).toBe('tool_use');
    expect(reply.content[0]).toEqual({ type: 'text', text: 'Two things at once.' });
    expect(reply.content.slice(1)).toEqual([
      {
        type: 'tool_use',
        id: expect.stringMatching(/^call_/),
        name: 'bash',
        input: { command: 'ls -la /tmp && echo "quoted \\"text\\""' },
      },
      {
        type: 'tool_use',
        id: expect.stringMatching(/^call_/),
        name: 'read_file',
        input: { path: 'notes/today.md' },
      },
    ]);
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
  ])('maps finish_reason %s to %s', async (finishReason, stopReason) => {
    fake.enqueue({ kind: 'message', text: 'some text', finish_reason: finishReason });
    expect((await model.complete(request())).stop_reason).toBe(stopReason);
  });

  it('reports tool_use when a server sends tool calls with finish_reason stop (as Ollama /v1 does)', async () => {
    fake.enqueue({
      kind: 'message',
      tool_calls: [{ name: 'bash', arguments: { command: 'ls' } }],
      finish_reason: 'stop',
    });
    expect((await model.complete(request())).stop_reason).toBe('tool_use');
  });

  it('keeps broken argument JSON as text so the tool input check tells the model', async () => {
    fake.enqueue({ kind: 'message', tool_calls: [{ name: 'bash', arguments: '{"command": "ls' }] });
    const reply = await model.complete(request());
    expect(reply.content).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String),
        name: 'bash',
        input: { invalid_arguments: '{"command": "ls' },
      },
    ]);
  });

  it('converts the canonical transcript: tool_use to tool_calls, tool_result to tool messages, text after them', async () => {
    await model.complete(request({ messages: toolRoundTrip }));
    expect(fake.violations).toEqual([]);
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'list and read' },
      {
        role: 'assistant',
        content: 'On it.',
        tool_calls: [
          { id: 'toolu_A', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
          { id: 'toolu_B', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_A', content: 'a.txt\n' },
      { role: 'tool', tool_call_id: 'toolu_B', content: 'Error: no such file' },
      { role: 'user', content: 'and hurry' },
    ]);
  });

  it("answers a history with an unanswered tool call with OpenAI's own 400, which fails for good", async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_orphan', name: 'bash', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'where is my result?' }] },
    ];
    const failure = await failureOf(model.complete(request({ messages })));
    expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
    expect(failure.message).toContain('did not have response messages: call_orphan');
    expect(fake.violations).toHaveLength(1);
  });

  it('turns a 429 retry-after into the next retry delay, with one request (retries belong to Temporal)', async () => {
    fake.enqueue({
      kind: 'error',
      status: 429,
      type: 'requests',
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached',
      headers: { 'retry-after': '7' },
    });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelRateLimited', nonRetryable: false, nextRetryDelay: 7_000 });
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    [500, 'The server had an error while processing your request.', 'ModelUnavailable', false],
    [503, 'The engine is currently overloaded, please try again later', 'ModelOverloaded', false],
    [529, 'Overloaded', 'ModelOverloaded', false],
    [408, 'Request timed out', 'ModelUnavailable', false],
    [400, "Invalid 'max_completion_tokens': integer below minimum value.", 'ModelRequestInvalid', true],
    [401, 'Incorrect API key provided', 'ModelAuthenticationFailed', true],
    [404, 'The model `gpt-nope` does not exist', 'ModelRequestInvalid', true],
    [
      429,
      'You exceeded your current quota, please check your plan and billing details.',
      'ModelSpendLimitReached',
      true,
    ],
  ])('maps HTTP %i "%s" to %s (non-retryable: %s)', async (status, message, failureType, nonRetryable) => {
    fake.enqueue({ kind: 'error', status, message });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: failureType, nonRetryable });
    expect(failure.message).toContain(message);
    if (status === 401) expect(failure.message).toContain('check OPENAI_API_KEY');
  });

  it('retries a stream that fails midway with an error chunk', async () => {
    fake.enqueue({
      kind: 'stream-error',
      type: 'server_error',
      message: 'The server is overloaded',
      afterDeltas: 2,
    });
    const deltas: string[] = [];
    const failure = await failureOf(model.complete(request({ onTextDelta: (text) => deltas.push(text) })));
    expect(deltas).toHaveLength(2);
    expect(failure).toMatchObject({ type: 'ModelUnavailable', nonRetryable: false });
    expect(failure.message).toContain('The server is overloaded');
  });

  describe('for a model without tool support', () => {
    const toolless = (models: string[] = []) => new TextToolsFallback(model, models);

    it('falls back to tools in the prompt when the server says tools are unsupported, and parses the call', async () => {
      fake.enqueue({
        kind: 'message',
        text: 'Let me look.\n<tool_call>{"name": "bash", "input": {"command": "ls"}}</tool_call>',
      });
      const client = toolless();
      const reply = await client.complete(modelRequest('gemma:2b'));
      expect(reply.stop_reason).toBe('tool_use');
      expect(reply.content).toEqual([
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'bash', input: { command: 'ls' } },
      ]);
      const [refused, retried] = fake.requests;
      expect(refused!.body.tools).toHaveLength(2);
      expect(retried!.body.tools).toBeUndefined();
      expect(retried!.body.messages[0]!.content).toContain('<tool_call>{"name": "<tool name>"');
      expect(retried!.body.messages[0]!.content).toContain('- bash: run');
      // Remembered: the next call goes straight to the prompt.
      await client.complete(modelRequest('gemma:2b'));
      expect(fake.requests[2]!.body.tools).toBeUndefined();
    });

    it('sends a configured tool-less model no tools at all and renders tool history as text', async () => {
      const messages: ModelMessage[] = [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt', is_error: false }],
        },
      ];
      fake.enqueue({ kind: 'message', text: 'There is a.txt.' });
      const reply = await toolless(['gpt-4.1']).complete(request({ messages }));
      expect(reply).toMatchObject({
        content: [{ type: 'text', text: 'There is a.txt.' }],
        stop_reason: 'end_turn',
      });
      const sent = fake.requests[0]!.body;
      expect(fake.requests).toHaveLength(1);
      expect(sent.tools).toBeUndefined();
      expect(sent.messages.slice(1)).toEqual([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '<tool_call>{"name":"bash","input":{"command":"ls"}}</tool_call>' },
        { role: 'user', content: '<tool_result>a.txt</tool_result>' },
      ]);
    });

    it('answers a malformed call with a corrective message, then takes the corrected call', async () => {
      fake.enqueue(
        { kind: 'message', text: '<tool_call>{"name": "bash", "input": {"command": "ls"</tool_call>' },
        { kind: 'message', text: '<tool_call>{"name": "rm_everything", "input": {}}</tool_call>' },
        { kind: 'message', text: '<tool_call>{"name": "bash", "input": {"command": "ls"}}</tool_call>' },
      );
      const reply = await toolless(['gpt-4.1']).complete(request());
      expect(reply.content).toEqual([
        { type: 'tool_use', id: expect.any(String), name: 'bash', input: { command: 'ls' } },
      ]);
      expect(fake.requests).toHaveLength(3);
      const corrections = fake.requests.slice(1).map((record) => record.body.messages.at(-1)!.content);
      expect(corrections[0]).toContain('not valid JSON');
      expect(corrections[1]).toContain('names tool "rm_everything"; the tools are bash, read_file');
      expect(reply.usage.output_tokens).toBeGreaterThanOrEqual(3);
    });

    it('gives up correcting after two tries and keeps the text as the answer, not a crash', async () => {
      const broken = { kind: 'message' as const, text: 'I will call <tool_call>{"name": "bash"' };
      fake.enqueue(broken, broken, broken);
      const reply = await toolless(['gpt-4.1']).complete(request());
      expect(reply).toMatchObject({
        stop_reason: 'end_turn',
        content: [{ type: 'text', text: broken.text }],
      });
      expect(fake.requests).toHaveLength(3);
      expect(fake.requests[1]!.body.messages.at(-1)!.content).toContain('not closed');
    });
  });
});
