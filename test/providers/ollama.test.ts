/**
 * What only Ollama's protocol has (real ollama client against the fake /api/chat), beside what
 * every provider passes (every-provider.test.ts): models it has not pulled, a server that is
 * not running, and models without tool support.
 */
import { OllamaModel } from '../../activities/model/ollama';
import { TextToolsFallback } from '../../activities/model/text-tools';
import { ollama, providerHarness, requestFor } from './provider-cases';
import { failureOf, modelRequest } from './provider-helpers';

const request = requestFor(ollama);

describe('the Ollama provider (real ollama client against the fake /api/chat)', () => {
  const provider = providerHarness(ollama);

  it('fails for good, naming the model, when Ollama has not pulled it', async () => {
    const failure = await failureOf(provider.model.complete(modelRequest('nope:1b')));
    expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
    expect(failure.message).toContain('model "nope:1b" not found, try pulling it first');
  });

  it('retries a server that is not running', async () => {
    const down = new OllamaModel({ host: 'http://127.0.0.1:1' });
    const failure = await failureOf(down.complete(request()));
    expect(failure).toMatchObject({ type: 'ModelConnectionError', nonRetryable: false });
    expect(failure.message).toContain('http://127.0.0.1:1');
  });

  it('falls back to tools in the prompt when Ollama says the model does not support tools', async () => {
    provider.fake.enqueue({
      kind: 'message',
      text: '<tool_call>{"name": "read_file", "input": {"path": "a.txt"}}</tool_call>',
    });
    const reply = await new TextToolsFallback(provider.model, []).complete(modelRequest('gemma:2b'));
    expect(reply).toMatchObject({
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'read_file', input: { path: 'a.txt' } }],
    });
    expect(provider.fake.requests.map((record) => record.body.tools?.length ?? 0)).toEqual([2, 0]);
  });
});
