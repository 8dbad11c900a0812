import { type FakeAnthropic, startFakeAnthropic, toolUsingResponder } from '../fakes/anthropic-server';
import { type FakeOllama, startFakeOllama, toolUsingOllamaResponder } from '../fakes/ollama-server';
import { type FakeOpenAI, startFakeOpenAI, toolUsingOpenAIResponder } from '../fakes/openai-server';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';
import { workerHarness } from '../helpers/worker-harness';

describe('conversations on every provider (fake servers, real clients, real Temporal)', () => {
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAI;
  let ollama: FakeOllama;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ responder: toolUsingResponder });
    openai = await startFakeOpenAI({ responder: toolUsingOpenAIResponder });
    ollama = await startFakeOllama({ responder: toolUsingOllamaResponder, toollessModels: ['gemma:2b'] });
  });
  const setup = workerHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: anthropic.url,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    OLLAMA_HOST: ollama.url,
    KEEL_MODEL_STALL_TIMEOUT_S: '5',
  }));
  afterAll(() => Promise.all([anthropic.close(), openai.close(), ollama.close()]));

  afterEach(() => {
    // Each fake answers (or records) a history that breaks the tool rule: that must never happen.
    expect(anthropic.violations).toEqual([]);
    expect(openai.violations).toEqual([]);
    expect(ollama.violations).toEqual([]);
  });

  it('runs the tool loop on openai:<model>: parallel tool calls, bash activities, an answer that reads the results', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'openai:gpt-4.1',
    });
    const before = openai.requests.length;
    const run = await conversation.ask('run: echo alpha\nrun: echo beta');
    expect(run).toMatchObject({ status: 'completed', steps: 2 });
    const transcript = await conversation.transcript();
    expect(toolResults(transcript).map((result) => result.content)).toEqual(['alpha\n', 'beta\n']);
    expect(lastAnswer(transcript)).toBe('Result: alpha\n\nResult: beta\n');
    expect(run.usage.input_tokens).toBeGreaterThan(0);
    const second = openai.requests[before + 1]!.body;
    expect(second.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
    ]);
  });

  it('runs the tool loop on ollama:<model> through the native /api/chat', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'ollama:llama3.2',
    });
    const run = await conversation.ask('run: echo gamma');
    expect(run).toMatchObject({ status: 'completed', steps: 2 });
    const transcript = await conversation.transcript();
    expect(toolResults(transcript).map((result) => result.content)).toEqual(['gamma\n']);
    expect(lastAnswer(transcript)).toBe('Result: gamma\n');
  });

  it('runs the tool loop on a model without tool support, through calls written in its text', async () => {
    ollama.setResponder((body) => {
      const last = body.messages.at(-1)!;
      if (last.content.includes('<tool_result>')) return { kind: 'message', text: `Saw ${last.content}` };
      return {
        kind: 'message',
        text: 'Checking.\n<tool_call>{"name": "bash", "input": {"command": "echo delta"}}</tool_call>',
      };
    });
    try {
      const conversation = await TestConversation.start(setup.client, setup.config, {
        model: 'ollama:gemma:2b',
      });
      const run = await conversation.ask('what does echo delta print?');
      expect(run).toMatchObject({ status: 'completed', steps: 2 });
      const transcript = await conversation.transcript();
      // The transcript is canonical: a tool_use block and its tool_result, whatever the model wrote.
      expect(transcript[1]).toMatchObject({
        role: 'assistant',
        stop_reason: 'tool_use',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', name: 'bash', input: { command: 'echo delta' } },
        ],
      });
      expect(toolResults(transcript).map((result) => result.content)).toEqual(['delta\n']);
      expect(lastAnswer(transcript)).toBe('Saw <tool_result>delta\n</tool_result>');
    } finally {
      ollama.setResponder(toolUsingOllamaResponder);
    }
  });

  it('switches one thread between anthropic, openai, ollama and scripted, and the transcript stays canonical', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    const counts = () => [anthropic.requests.length, openai.requests.length, ollama.requests.length];
    const start = counts();
    const runs = [];
    runs.push(await conversation.ask('run: echo one'));
    runs.push(await conversation.ask('run: echo two', { model: 'openai:gpt-4.1' }));
    runs.push(await conversation.ask('run: echo three', { model: 'ollama:llama3.2' }));
    runs.push(await conversation.ask('run: echo four', { model: 'scripted:demo' }));
    runs.push(await conversation.ask('run: echo five', { model: 'anthropic:claude-sonnet-4-5' }));
    expect(runs.map((run) => run.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
    // Two model calls a run, each exactly once.
    expect(counts().map((count, index) => count - start[index]!)).toEqual([4, 2, 2]);
    const transcript = await conversation.transcript();
    expect(toolResults(transcript).map((result) => result.content)).toEqual([
      'one\n',
      'two\n',
      'three\n',
      'four\n',
      'five\n',
    ]);
    // Every provider saw the whole history in its own format and accepted it.
    expect(ollama.requests.at(-1)!.body.messages.filter((message) => message.role === 'tool')).toHaveLength(
      3,
    );
    const last = anthropic.requests.at(-1)!.body.messages;
    expect(last.filter((message) => message.role === 'assistant')).toHaveLength(9);
    expect(
      transcript.filter((message) => message.role === 'assistant').map((message) => message.model),
    ).toEqual([
      'claude-sonnet-4-5',
      'claude-sonnet-4-5',
      'gpt-4.1',
      'gpt-4.1',
      'llama3.2',
      'llama3.2',
      expect.stringContaining('scripted'),
      expect.stringContaining('scripted'),
      'claude-sonnet-4-5',
      'claude-sonnet-4-5',
    ]);
  });

  it('fails the run with a readable error once the 6 attempts are spent', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'openai:gpt-4.1',
    });
    const before = openai.requests.length;
    const unavailable = {
      kind: 'error' as const,
      status: 500,
      message: 'The server had an error while processing your request.',
      headers: { 'retry-after-ms': '100' },
    };
    // The server fails every request: only the cap ends the run.
    openai.setResponder(() => unavailable);
    try {
      const run = await conversation.ask('hello');
      expect(run).toMatchObject({ status: 'failed', error: { type: 'ModelUnavailable' } });
      expect(run.error!.message).toContain('The server had an error while processing your request.');
      expect(openai.requests.length - before).toBe(6);
    } finally {
      openai.setResponder(toolUsingOpenAIResponder);
    }
  }, 60_000);

  it('ends a run cut off by max_tokens as completed with the reason, running none of its tool calls', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    anthropic.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'I was about to' },
        { type: 'tool_use', id: 'toolu_cut', name: 'bash', input: { command: 'echo never' } },
      ],
      stop_reason: 'max_tokens',
    });
    const run = await conversation.ask('write a long essay');
    expect(run).toMatchObject({ status: 'completed', status_reason: 'max_tokens', steps: 1 });
    const transcript = await conversation.transcript();
    expect(toolResults(transcript)).toEqual([]);
    expect(lastAnswer(transcript)).toBe('I was about to');
  });

  it('ends a refused turn without running tools, and continues a paused turn in a new call', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    anthropic.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'I cannot help with that.' },
        { type: 'tool_use', id: 'toolu_no', name: 'bash', input: { command: 'echo no' } },
      ],
      stop_reason: 'refusal',
    });
    const refused = await conversation.ask('do something bad');
    expect(refused).toMatchObject({ status: 'completed', status_reason: 'refusal' });
    expect(toolResults(await conversation.transcript())).toEqual([]);
    anthropic.enqueue(
      { kind: 'message', content: [{ type: 'text', text: 'Searching... ' }], stop_reason: 'pause_turn' },
      { kind: 'message', content: [{ type: 'text', text: 'found it.' }], stop_reason: 'end_turn' },
    );
    const paused = await conversation.ask('look it up');
    expect(paused).toMatchObject({ status: 'completed', steps: 2 });
    expect(lastAnswer(await conversation.transcript())).toBe('found it.');
  });

  it('retries an Anthropic stream that fails midway with overloaded_error, then completes', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'anthropic:claude-sonnet-4-5',
    });
    const before = anthropic.requests.length;
    anthropic.enqueue({
      kind: 'stream-error',
      type: 'overloaded_error',
      message: 'Overloaded',
      afterDeltas: 1,
    });
    const run = await conversation.ask('hello');
    expect(run.status).toBe('completed');
    expect(lastAnswer(await conversation.transcript())).toBe('You said: hello');
    expect(anthropic.requests.length - before).toBe(2);
  });

  it('waits as long as an OpenAI-compatible retry-after says, then completes', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'openai:gpt-4.1',
    });
    const before = openai.requests.length;
    openai.enqueue({
      kind: 'error',
      status: 429,
      message: 'Rate limit reached',
      headers: { 'retry-after': '2' },
    });
    const run = await conversation.ask('hello');
    expect(run.status).toBe('completed');
    const [limited, retried] = openai.requests.slice(before);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(1_900);
  });

  it('fails at once, naming the key, on an OpenAI 401', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model: 'openai:gpt-4.1',
    });
    const before = openai.requests.length;
    openai.enqueue({ kind: 'error', status: 401, message: 'Incorrect API key provided' });
    const run = await conversation.ask('hello');
    expect(run).toMatchObject({ status: 'failed', error: { type: 'ModelAuthenticationFailed' } });
    expect(run.error!.message).toContain('check OPENAI_API_KEY');
    expect(openai.requests.length - before).toBe(1);
  });
});
