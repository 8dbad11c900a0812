/**
 * Each provider under test: how to start its fake and the real client against it, and how its
 * protocol says what every provider must handle (`every-provider.test.ts` runs the same tests
 * against each). A provider's own file tests only what its protocol alone has.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { AnthropicModel } from '../../activities/model/anthropic';
import type { ModelClient, TokenUsage } from '../../activities/model/client';
import { OllamaModel } from '../../activities/model/ollama';
import { OpenAIModel } from '../../activities/model/openai';
import type { FailureType } from '../../common/failures';
import type { StopReason } from '../../common/transcript';
import {
  startFakeAnthropic,
  type FakeAnthropic,
  type Reply as AnthropicReply,
} from '../fakes/anthropic-server';
import type { ChatReply } from '../fakes/chat-fake';
import type { ConnectionFault } from '../fakes/fake-http-server';
import { startFakeOllama, type FakeOllama } from '../fakes/ollama-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { modelRequest } from './provider-helpers';

/** The faults every fake injects the same way. */
export type Fault = ConnectionFault | { kind: 'stall'; afterDeltas: number };

/** What the shared tests need of a fake; each fake's own type says more. */
export interface FakeUnderTest<Reply> {
  requests: ReadonlyArray<{ body: unknown; headers: IncomingHttpHeaders }>;
  violations: string[];
  enqueue(...replies: Array<Reply | Fault>): void;
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

export interface ProviderUnderTest<Fake> {
  fake: Fake;
  model: ModelClient;
}

/** One HTTP error the server answers, and the failure Keel makes of it. */
export interface HttpErrorCase {
  status: number;
  /** The error type the server names (where its protocol has one). */
  type?: string;
  message: string;
  failure: FailureType;
  nonRetryable: boolean;
}

export interface ProviderCase<Fake extends FakeUnderTest<Reply>, Reply> {
  /** How test names and failures name the provider. */
  name: string;
  /** The model every request names. */
  model: string;
  /** How the client's stall failure names the server. */
  label: string;
  start(): Promise<ProviderUnderTest<Fake>>;
  /** A streamed answer with token counts, and the usage Keel reads from them. */
  streamedText(text: string): { reply: Reply; usage: TokenUsage };
  /** What the request of a streamed answer carries besides its messages (stream flag, limits, system, tools). */
  expectStreamedRequest(record: Fake['requests'][number]): void;
  /** An answer with text and parallel tool calls; `toolUseId` says how the client's ids look. */
  toolCalls(text: string, calls: Array<{ name: string; input: Record<string, unknown> }>): Reply;
  toolUseId(index: number): unknown;
  /** The server's stop reasons with Keel's for each, and an answer of text `partial or whole` that reports one. */
  stopReasons: Array<[string, StopReason]>;
  stopped(reason: string): Reply;
  /** The canonical tool round trip (`toolRoundTrip`) as the server receives it. */
  toolRoundTripSent?: unknown[];
  error(error: Omit<HttpErrorCase, 'failure' | 'nonRetryable'>): Reply;
  errors: HttpErrorCase[];
  /** A rate limit with a `retry-after`, and the next retry delay Keel makes of it. */
  rateLimited: { reply: Reply; nextRetryDelay: number | undefined };
  /** What a 401 failure tells the user to check. */
  authenticationHint?: string;
  /** A stream that fails after two text pieces, and the failure Keel makes of it. */
  streamError: { reply: Reply; failure: FailureType; message?: string };
  /** A call left unanswered, by an id of the server's style, and its refusal (absent: it accepts one). */
  orphan?: { id: string; refusal: string };
}

const usage = (input: number, output: number, cacheRead = 0): TokenUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: 0,
});

const stallTimeoutMs = 1_500;

export const anthropic: ProviderCase<FakeAnthropic, AnthropicReply> = {
  name: 'Anthropic (real SDK against the fake Messages API)',
  model: 'claude-sonnet-4-5',
  label: 'Anthropic',
  start: async () => {
    const fake = await startFakeAnthropic();
    return { fake, model: new AnthropicModel({ apiKey: 'test-key', baseURL: fake.url, stallTimeoutMs }) };
  },
  streamedText: (text) => ({
    reply: {
      kind: 'message',
      content: [{ type: 'text', text }],
      usage: { input_tokens: 42, output_tokens: 7, cache_read_input_tokens: 30 },
      tokenDelayMs: 5,
    },
    usage: usage(42, 7, 30),
  }),
  expectStreamedRequest: ({ body }) => expect(body.stream).toBe(true),
  toolCalls: (text, calls) => ({
    kind: 'message',
    content: [
      { type: 'text', text },
      ...calls.map((call, index) => ({ type: 'tool_use' as const, id: `toolu_01${'AB'[index]}`, ...call })),
    ],
  }),
  toolUseId: (index) => `toolu_01${'AB'[index]}`,
  stopReasons: (['end_turn', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal'] as const).map(
    (reason) => [reason, reason],
  ),
  stopped: (reason) => ({
    kind: 'message',
    content: [{ type: 'text', text: 'partial or whole' }],
    stop_reason: reason as StopReason,
  }),
  error: ({ status, type, message }) => ({ kind: 'error', status, type: type ?? 'api_error', message }),
  errors: [
    {
      status: 500,
      type: 'api_error',
      message: 'Internal server error',
      failure: 'ModelUnavailable',
      nonRetryable: false,
    },
    {
      status: 529,
      type: 'overloaded_error',
      message: 'Overloaded',
      failure: 'ModelOverloaded',
      nonRetryable: false,
    },
    {
      status: 408,
      type: 'timeout_error',
      message: 'Request timeout',
      failure: 'ModelUnavailable',
      nonRetryable: false,
    },
    {
      status: 400,
      type: 'invalid_request_error',
      message: 'max_tokens: must be at least 1',
      failure: 'ModelRequestInvalid',
      nonRetryable: true,
    },
    {
      status: 401,
      type: 'authentication_error',
      message: 'invalid x-api-key',
      failure: 'ModelAuthenticationFailed',
      nonRetryable: true,
    },
    {
      status: 404,
      type: 'not_found_error',
      message: 'model: claude-nope',
      failure: 'ModelRequestInvalid',
      nonRetryable: true,
    },
    {
      status: 429,
      type: 'rate_limit_error',
      message: 'You have reached your specified API usage limits (monthly spend limit)',
      failure: 'ModelSpendLimitReached',
      nonRetryable: true,
    },
  ],
  rateLimited: {
    reply: {
      kind: 'error',
      status: 429,
      type: 'rate_limit_error',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
      headers: { 'retry-after': '7' },
    },
    nextRetryDelay: 7_000,
  },
  authenticationHint: 'check ANTHROPIC_API_KEY',
  streamError: {
    reply: { kind: 'stream-error', type: 'overloaded_error', message: 'Overloaded', afterDeltas: 2 },
    failure: 'ModelOverloaded',
  },
  orphan: {
    id: 'toolu_orphan',
    refusal: '`tool_use` ids were found without `tool_result` blocks immediately after: toolu_orphan',
  },
};

/** What the two chat-shaped fakes (OpenAI-compatible, Ollama) share in their scripts. */
const chatReplies = {
  toolCalls: (text: string, calls: Array<{ name: string; input: Record<string, unknown> }>): ChatReply => ({
    kind: 'message',
    text,
    tool_calls: calls.map(({ name, input }) => ({ name, arguments: input })),
  }),
  toolUseId: (): unknown => expect.stringMatching(/^call_/),
  stopped: (reason: string): ChatReply => ({
    kind: 'message',
    text: 'partial or whole',
    finish_reason: reason,
  }),
  error: ({ status, message }: { status: number; message: string }): ChatReply => ({
    kind: 'error',
    status,
    message,
  }),
};

/** What both chat-shaped servers get: the system prompt as the first message, tools by name. */
function expectChatRequest(body: { messages: unknown[]; tools?: Array<{ function: { name: string } }> }) {
  expect(body.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
  expect(body.tools?.map((tool) => tool.function.name)).toEqual(['bash', 'read_file']);
}

/** The canonical tool round trip as a chat-shaped server gets it, with its own calls and results. */
const chatRoundTrip = (toolCalls: unknown[], results: unknown[]): unknown[] => [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: 'list and read' },
  { role: 'assistant', content: 'On it.', tool_calls: toolCalls },
  ...results,
  { role: 'user', content: 'and hurry' },
];

export const openai: ProviderCase<FakeOpenAI, ChatReply> = {
  name: 'OpenAI-compatible (real openai client against the fake Chat Completions API)',
  model: 'gpt-4.1',
  label: 'the OpenAI-compatible server',
  start: async () => {
    const fake = await startFakeOpenAI({ toollessModels: ['gemma:2b'] });
    return {
      fake,
      model: new OpenAIModel({ apiKey: 'test-key', baseURL: `${fake.url}/v1`, stallTimeoutMs }),
    };
  },
  streamedText: (text) => ({
    reply: {
      kind: 'message',
      text,
      usage: { prompt_tokens: 50, completion_tokens: 7, cached_tokens: 30 },
      tokenDelayMs: 5,
    },
    usage: usage(20, 7, 30),
  }),
  expectStreamedRequest: ({ body, headers }) => {
    expect(body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 1024,
    });
    expectChatRequest(body);
    expect(headers.authorization).toBe('Bearer test-key');
  },
  ...chatReplies,
  stopReasons: [
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
  ],
  toolRoundTripSent: chatRoundTrip(
    [
      { id: 'toolu_A', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
      { id: 'toolu_B', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
    ],
    [
      { role: 'tool', tool_call_id: 'toolu_A', content: 'a.txt\n' },
      { role: 'tool', tool_call_id: 'toolu_B', content: 'Error: no such file' },
    ],
  ),
  errors: [
    {
      status: 500,
      message: 'The server had an error while processing your request.',
      failure: 'ModelUnavailable',
      nonRetryable: false,
    },
    {
      status: 503,
      message: 'The engine is currently overloaded, please try again later',
      failure: 'ModelOverloaded',
      nonRetryable: false,
    },
    { status: 529, message: 'Overloaded', failure: 'ModelOverloaded', nonRetryable: false },
    { status: 408, message: 'Request timed out', failure: 'ModelUnavailable', nonRetryable: false },
    {
      status: 400,
      message: "Invalid 'max_completion_tokens': integer below minimum value.",
      failure: 'ModelRequestInvalid',
      nonRetryable: true,
    },
    {
      status: 401,
      message: 'Incorrect API key provided',
      failure: 'ModelAuthenticationFailed',
      nonRetryable: true,
    },
    {
      status: 404,
      message: 'The model `gpt-nope` does not exist',
      failure: 'ModelRequestInvalid',
      nonRetryable: true,
    },
    {
      status: 429,
      message: 'You exceeded your current quota, please check your plan and billing details.',
      failure: 'ModelSpendLimitReached',
      nonRetryable: true,
    },
  ],
  rateLimited: {
    reply: {
      kind: 'error',
      status: 429,
      type: 'requests',
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached',
      headers: { 'retry-after': '7' },
    },
    nextRetryDelay: 7_000,
  },
  authenticationHint: 'check OPENAI_API_KEY',
  streamError: {
    reply: {
      kind: 'stream-error',
      type: 'server_error',
      message: 'The server is overloaded',
      afterDeltas: 2,
    },
    failure: 'ModelUnavailable',
    message: 'The server is overloaded',
  },
  orphan: { id: 'call_orphan', refusal: 'did not have response messages: call_orphan' },
};

export const ollama: ProviderCase<FakeOllama, ChatReply> = {
  name: 'Ollama (real ollama client against the fake /api/chat)',
  model: 'llama3.2',
  label: 'Ollama',
  start: async () => {
    const fake = await startFakeOllama({ toollessModels: ['gemma:2b'] });
    return { fake, model: new OllamaModel({ host: fake.url, stallTimeoutMs }) };
  },
  streamedText: (text) => ({
    reply: { kind: 'message', text, usage: { prompt_tokens: 42, completion_tokens: 7 }, tokenDelayMs: 5 },
    usage: usage(42, 7),
  }),
  expectStreamedRequest: ({ body }) => {
    expect(body).toMatchObject({ stream: true, options: { num_predict: 1024 } });
    expectChatRequest(body);
  },
  ...chatReplies,
  stopReasons: [
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
  ],
  toolRoundTripSent: chatRoundTrip(
    [
      { function: { name: 'bash', arguments: { command: 'ls' } } },
      { function: { name: 'read_file', arguments: { path: 'a.txt' } } },
    ],
    [
      { role: 'tool', content: 'a.txt\n', tool_name: 'bash' },
      { role: 'tool', content: 'Error: no such file', tool_name: 'read_file' },
    ],
  ),
  errors: [
    {
      status: 500,
      message: 'llama runner process has terminated: signal: killed',
      failure: 'ModelUnavailable',
      nonRetryable: false,
    },
    {
      status: 503,
      message: 'server busy, please try again.  maximum pending requests exceeded',
      failure: 'ModelOverloaded',
      nonRetryable: false,
    },
    {
      status: 400,
      message: 'invalid options: num_predict',
      failure: 'ModelRequestInvalid',
      nonRetryable: true,
    },
    { status: 401, message: 'unauthorized', failure: 'ModelAuthenticationFailed', nonRetryable: true },
  ],
  rateLimited: {
    // From a proxy in front of Ollama. The ollama client drops response headers, so Temporal's
    // backoff applies instead.
    reply: { kind: 'error', status: 429, message: 'too many requests', headers: { 'retry-after': '3' } },
    nextRetryDelay: undefined,
  },
  streamError: {
    reply: {
      kind: 'stream-error',
      message: 'an error was encountered while running the model',
      afterDeltas: 2,
    },
    failure: 'ModelUnavailable',
    message: 'an error was encountered while running the model',
  },
};

/** Starts the provider's fake and client before each test and closes the fake after it. */
export function providerHarness<Fake extends { close(): Promise<void> }>(provider: {
  start(): Promise<ProviderUnderTest<Fake>>;
}): ProviderUnderTest<Fake> {
  const harness = {} as ProviderUnderTest<Fake>;
  beforeEach(async () => {
    Object.assign(harness, await provider.start());
  });
  afterEach(async () => {
    await harness.fake.close();
  });
  return harness;
}

/** A request to the provider's model. */
export const requestFor =
  (provider: { model: string }) =>
  (overrides: Parameters<typeof modelRequest>[1] = {}) =>
    modelRequest(provider.model, overrides);
