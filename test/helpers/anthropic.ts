import { type FakeAnthropic, type Reply, startFakeAnthropic } from '../fakes/anthropic-server';

/** A fake Anthropic Messages API for one describe block, and the env that points Keel's Claude at it. */
export interface FakeAnthropicApi {
  /** The running fake (set in `beforeAll`). */
  readonly server: FakeAnthropic;
  /** `ANTHROPIC_*` and `KEEL_MODEL` for a worker whose model is Claude, on the fake. */
  env(): Record<string, string>;
}

/**
 * Starts the fake in `beforeAll` and closes it in `afterAll`; call it before the harness that
 * reads its `env`, so the fake is up when the harness starts.
 */
export function fakeAnthropicApi(): FakeAnthropicApi {
  let server: FakeAnthropic | undefined;
  beforeAll(async () => {
    server = await startFakeAnthropic();
  });
  afterAll(() => server?.close());
  return {
    get server() {
      return fakeOf();
    },
    env: () => ({
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fakeOf().url,
      KEEL_MODEL: 'anthropic:claude-sonnet-4-5',
    }),
  };
  function fakeOf(): FakeAnthropic {
    if (server === undefined) throw new Error('the fake Anthropic API starts in beforeAll');
    return server;
  }
}

/**
 * A model call that fails as overloaded after three words of its text, then an attempt that
 * answers "the answer that counts": a call retried midway, as a client must show it.
 */
export const retriedMidway: Reply[] = [
  {
    kind: 'stream-error',
    type: 'overloaded_error',
    message: 'Overloaded',
    afterDeltas: 3,
    content: [{ type: 'text', text: 'lost words that never count' }],
  },
  { kind: 'message', content: [{ type: 'text', text: 'the answer that counts' }], tokenDelayMs: 5 },
];
