import { OllamaModel } from '../../activities/model/ollama';
import { TextToolsFallback } from '../../activities/model/text-tools';
import { type FakeOllama, startFakeOllama } from '../fakes/ollama-server';
import { failureOf, modelRequest, toolRoundTrip } from './provider-helpers';
import { itBehavesLikeAProvider } from './provider-suite';

const request = (overrides: Parameters<typeof modelRequest>[1] = {}) => modelRequest('llama3.2', overrides);

describe('the Ollama provider (real ollama client against the fake /api/chat)', () => {
  let fake: FakeOllama;
  let model: OllamaModel;

  beforeEach(async () => {
    fake = await startFakeOllama({ toollessModels: ['gemma:2b'] });
    model = new OllamaModel({ host: fake.url, stallTimeoutMs: 1_500 });
  });

  afterEach(async () => {
    await fake.close();
  });

  itBehavesLikeAProvider(() => ({ fake, model, request }));

  it('streams NDJSON text as it arrives and maps the eval counts to usage', async () => {
    fake.enqueue({
      kind: 'message',
      text: 'Hello there, streaming friend.',
      usage: { prompt_tokens: 42, completion_tokens: 7 },
      tokenDelayMs: 5,
    });
    const deltas: string[] = [];
    const reply = await model.complete(request({ onTextDelta: (text) => deltas.push(text) }));
    expect(deltas.length).toBeGreaterThan(2);
    expect(reply).toEqual({
      content: [{ type: 'text', text: 'Hello there, streaming friend.' }],
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 42,
        output_tokens: 7,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
      model: 'llama3.2',
    });
    const sent = fake.requests[0]!.body;
    expect(sent).toMatchObject({ stream: true, options: { num_predict: 1024 } });
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
    expect(sent.tools?.map((tool) => tool.function.name)).toEqual(['bash', 'read_file']);
  });

  it('turns parallel tool calls into tool_use blocks with ids of their own', async () => {
    fake.enqueue({
      kind: 'message',
      tool_calls: [
        { name: 'bash', arguments: { command: 'ls' } },
        { name: 'read_file', arguments: { path: 'a.txt' } },
      ],
    });
    const reply = await model.complete(request());
    expect(reply.stop_reason).toBe('tool_use');
    expect(reply.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^call_/), name: 'bash', input: { command: 'ls' } },
      { type: 'tool_use', id: expect.stringMatching(/^call_/), name: 'read_file', input: { path: 'a.txt' } },
    ]);
    const ids = reply.content.map((block) => (block.type === 'tool_use' ? block.id : ''));
    expect(new Set(ids).size).toBe(2);
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
  ])('maps done_reason %s to %s', async (doneReason, stopReason) => {
    fake.enqueue({ kind: 'message', text: 'some text', finish_reason: doneReason });
    expect((await model.complete(request())).stop_reason).toBe(stopReason);
  });

  it('converts the canonical transcript: tool_calls on the assistant, tool messages named by tool, text after them', async () => {
    await model.complete(request({ messages: toolRoundTrip }));
    expect(fake.violations).toEqual([]);
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'list and read' },
      {
        role: 'assistant',
        content: 'On it.',
        tool_calls: [
          { function: { name: 'bash', arguments: { command: 'ls' } } },
          { function: { name: 'read_file', arguments: { path: 'a.txt' } } },
        ],
      },
      { role: 'tool', content: 'a.txt\n', tool_name: 'bash' },
      { role: 'tool', content: 'Error: no such file', tool_name: 'read_file' },
      { role: 'user', content: 'and hurry' },
    ]);
  });

  it('turns a 429 retry-after (from a proxy in front of Ollama) into the next retry delay', async () => {
    fake.enqueue({
      kind: 'error',
      status: 429,
      message: 'too many requests',
      headers: { 'retry-after': '3' },
    });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelRateLimited', nonRetryable: false });
    // The ollama client drops response headers, so Temporal's backoff applies instead.
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it.each([
    [500, 'llama runner process has terminated: signal: killed', 'ModelUnavailable', false],
    [503, 'server busy, please try again.  maximum pending requests exceeded', 'ModelOverloaded', false],
    [400, 'invalid options: num_predict', 'ModelRequestInvalid', true],
    [401, 'unauthorized', 'ModelAuthenticationFailed', true],
  ])('maps HTTP %i "%s" to %s (non-retryable: %s)', async (status, message, failureType, nonRetryable) => {
    fake.enqueue({ kind: 'error', status, message });
    const failure = await failureOf(model.complete(request()));
    expect(failure).toMatchObject({ type: failureType, nonRetryable });
    expect(failure.message).toContain(message);
  });

  it('fails for good, naming the model, when Ollama has not pulled it', async () => {
    const failure = await failureOf(model.complete(modelRequest('nope:1b')));
    expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
    expect(failure.message).toContain('model "nope:1b" not found, try pulling it first');
  });

  it('retries a stream that fails midway with an error line', async () => {
    fake.enqueue({
      kind: 'stream-error',
      message: 'an error was encountered while running the model',
      afterDeltas: 2,
    });
    const deltas: string[] = [];
    const failure = await failureOf(model.complete(request({ onTextDelta: (text) => deltas.push(text) })));
    expect(deltas).toHaveLength(2);
    expect(failure).toMatchObject({ type: 'ModelUnavailable', nonRetryable: false });
    expect(failure.message).toContain('an error was encountered while running the model');
  });

  it('retries a server that is not running', async () => {
    const down = new OllamaModel({ host: 'http://127.0.0.1:1' });
    const failure = await failureOf(down.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelConnectionError', nonRetryable: false });
    expect(failure.message).toContain('http://127.0.0.1:1');
  });

  it('falls back to tools in the prompt when Ollama says the model does not support tools', async () => {
    fake.enqueue({
      kind: 'message',
      text: '<tool_call>{"name": "read_file", "input": {"path": "a.txt"}}</tool_call>',
    });
    const reply = await new TextToolsFallback(model, []).complete(modelRequest('gemma:2b'));
    expect(reply).toMatchObject({
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'read_file', input: { path: 'a.txt' } }],
    });
    expect(fake.requests.map((record) => record.body.tools?.length ?? 0)).toEqual([2, 0]);
  });
});
