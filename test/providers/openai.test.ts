/**
 * What only the OpenAI-compatible protocol has (real openai client against the fake Chat
 * Completions API), beside what every provider passes (every-provider.test.ts): its finish
 * reasons with tool calls, arguments as JSON text, and models without tool support.
 */
import { TextToolsFallback } from '../../activities/model/text-tools';
import type { ModelMessage } from '../../common/transcript';
import { openai, providerHarness, requestFor } from './provider-cases';
import { modelRequest } from './provider-helpers';

const request = requestFor(openai);

describe('the OpenAI-compatible provider (real openai client against the fake Chat Completions API)', () => {
  const provider = providerHarness(openai);

  it('reports tool_use when a server sends tool calls with finish_reason stop (as Ollama /v1 does)', async () => {
    provider.fake.enqueue({
      kind: 'message',
      tool_calls: [{ name: 'bash', arguments: { command: 'ls' } }],
      finish_reason: 'stop',
    });
    expect((await provider.model.complete(request())).stop_reason).toBe('tool_use');
  });

  it('keeps broken argument JSON as text so the tool input check tells the model', async () => {
    provider.fake.enqueue({ kind: 'message', tool_calls: [{ name: 'bash', arguments: '{"command": "ls' }] });
    const reply = await provider.model.complete(request());
    expect(reply.content).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String),
        name: 'bash',
        input: { invalid_arguments: '{"command": "ls' },
      },
    ]);
  });

  describe('for a model without tool support', () => {
    const toolless = (models: string[] = []) => new TextToolsFallback(provider.model, models);

    it('falls back to tools in the prompt when the server says tools are unsupported, and parses the call', async () => {
      provider.fake.enqueue({
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
      const [refused, retried] = provider.fake.requests;
      expect(refused!.body.tools).toHaveLength(2);
      expect(retried!.body.tools).toBeUndefined();
      expect(retried!.body.messages[0]!.content).toContain('<tool_call>{"name": "<tool name>"');
      expect(retried!.body.messages[0]!.content).toContain('- bash: run');
      // Remembered: the next call goes straight to the prompt.
      await client.complete(modelRequest('gemma:2b'));
      expect(provider.fake.requests[2]!.body.tools).toBeUndefined();
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
      provider.fake.enqueue({ kind: 'message', text: 'There is a.txt.' });
      const reply = await toolless(['gpt-4.1']).complete(request({ messages }));
      expect(reply).toMatchObject({
        content: [{ type: 'text', text: 'There is a.txt.' }],
        stop_reason: 'end_turn',
      });
      const sent = provider.fake.requests[0]!.body;
      expect(provider.fake.requests).toHaveLength(1);
      expect(sent.tools).toBeUndefined();
      expect(sent.messages.slice(1)).toEqual([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '<tool_call>{"name":"bash","input":{"command":"ls"}}</tool_call>' },
        { role: 'user', content: '<tool_result>a.txt</tool_result>' },
      ]);
    });

    it('answers a malformed call with a corrective message, then takes the corrected call', async () => {
      provider.fake.enqueue(
        { kind: 'message', text: '<tool_call>{"name": "bash", "input": {"command": "ls"</tool_call>' },
        { kind: 'message', text: '<tool_call>{"name": "rm_everything", "input": {}}</tool_call>' },
        { kind: 'message', text: '<tool_call>{"name": "bash", "input": {"command": "ls"}}</tool_call>' },
      );
      const reply = await toolless(['gpt-4.1']).complete(request());
      expect(reply.content).toEqual([
        { type: 'tool_use', id: expect.any(String), name: 'bash', input: { command: 'ls' } },
      ]);
      expect(provider.fake.requests).toHaveLength(3);
      const corrections = provider.fake.requests
        .slice(1)
        .map((record) => record.body.messages.at(-1)!.content);
      expect(corrections[0]).toContain('not valid JSON');
      expect(corrections[1]).toContain('names tool "rm_everything"; the tools are bash, read_file');
      expect(reply.usage.output_tokens).toBeGreaterThanOrEqual(3);
    });

    it('gives up correcting after two tries and keeps the text as the answer, not a crash', async () => {
      const broken = { kind: 'message' as const, text: 'I will call <tool_call>{"name": "bash"' };
      provider.fake.enqueue(broken, broken, broken);
      const reply = await toolless(['gpt-4.1']).complete(request());
      expect(reply).toMatchObject({
        stop_reason: 'end_turn',
        content: [{ type: 'text', text: broken.text }],
      });
      expect(provider.fake.requests).toHaveLength(3);
      expect(provider.fake.requests[1]!.body.messages.at(-1)!.content).toContain('not closed');
    });
  });
});
