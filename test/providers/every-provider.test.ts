/**
 * The tests every provider must pass, each run against every provider's fake through the real
 * client: streaming, parallel tool calls, stop reasons, the canonical transcript, HTTP errors,
 * broken and silent streams, and cancellation. What only one protocol has is in its own file.
 */
import type { ModelMessage } from '../../common/transcript';
import {
  anthropic,
  type FakeUnderTest,
  type Fault,
  ollama,
  openai,
  type ProviderCase,
  providerHarness,
  requestFor,
} from './provider-cases';
import { failureOf, toolRoundTrip } from './provider-helpers';

function itBehavesLikeAProvider<Fake extends FakeUnderTest<Reply>, Reply>(
  provider: ProviderCase<Fake, Reply>,
): void {
  describe(`the ${provider.name}`, () => {
    const current = providerHarness(provider);
    const request = requestFor(provider);

    it('streams text as it arrives and maps the stop reason, usage and model', async () => {
      const text = 'Hello there, streaming friend.';
      const { reply, usage } = provider.streamedText(text);
      current.fake.enqueue(reply);
      const deltas: string[] = [];
      const answer = await current.model.complete(request({ onTextDelta: (delta) => deltas.push(delta) }));
      expect(deltas.length).toBeGreaterThan(2);
      expect(deltas.join('')).toBe(text);
      expect(answer).toEqual({
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        usage,
        model: provider.model,
      });
      provider.expectStreamedRequest(current.fake.requests[0]!);
      expect(current.fake.violations).toEqual([]);
    });

    it('assembles parallel tool calls whose arguments arrive split across chunks', async () => {
      const calls = [
        { name: 'bash', input: { command: 'ls -la /tmp && echo "quoted \\"text\\""' } },
        { name: 'read_file', input: { path: 'notes/today.md' } },
      ];
      current.fake.enqueue(provider.toolCalls('Two things at once.', calls));
      const reply = await current.model.complete(request());
      expect(reply.stop_reason).toBe('tool_use');
      expect(reply.content).toEqual([
        { type: 'text', text: 'Two things at once.' },
        ...calls.map((call, index) => ({ type: 'tool_use', id: provider.toolUseId(index), ...call })),
      ]);
      const ids = reply.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
      expect(new Set(ids).size).toBe(2);
    });

    it.each(provider.stopReasons)('maps the stop reason %s to %s', async (reason, stopReason) => {
      current.fake.enqueue(provider.stopped(reason));
      expect(await current.model.complete(request())).toMatchObject({
        stop_reason: stopReason,
        content: [{ type: 'text', text: 'partial or whole' }],
      });
    });

    const sent = provider.toolRoundTripSent;
    if (sent !== undefined)
      it('converts the canonical transcript: tool calls, their results, and text after them', async () => {
        await current.model.complete(request({ messages: toolRoundTrip }));
        expect(current.fake.violations).toEqual([]);
        expect((current.fake.requests[0]!.body as { messages: unknown }).messages).toEqual(sent);
      });

    const orphan = provider.orphan;
    if (orphan !== undefined)
      it("answers a history with an unanswered tool call with the server's own 400, which fails for good", async () => {
        const messages: ModelMessage[] = [
          { role: 'user', content: [{ type: 'text', text: 'go' }] },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: orphan.id, name: 'bash', input: {} }],
          },
          { role: 'user', content: [{ type: 'text', text: 'where is my result?' }] },
        ];
        const failure = await failureOf(current.model.complete(request({ messages })));
        expect(failure).toMatchObject({ type: 'ModelRequestInvalid', nonRetryable: true });
        expect(failure.message).toContain(orphan.refusal);
        expect(current.fake.violations).toHaveLength(1);
      });

    it('turns a retry-after into the next retry delay, with one request (retries belong to Temporal)', async () => {
      current.fake.enqueue(provider.rateLimited.reply);
      const failure = await failureOf(current.model.complete(request()));
      expect(failure).toMatchObject({ type: 'ModelRateLimited', nonRetryable: false });
      expect(failure.nextRetryDelay).toBe(provider.rateLimited.nextRetryDelay);
      expect(current.fake.requests).toHaveLength(1);
    });

    it.each(provider.errors)(
      'maps HTTP $status "$message" to $failure (non-retryable: $nonRetryable), with one request',
      async (error) => {
        current.fake.enqueue(provider.error(error));
        const failure = await failureOf(current.model.complete(request()));
        expect(failure).toMatchObject({ type: error.failure, nonRetryable: error.nonRetryable });
        expect(failure.message).toContain(error.message);
        if (error.status === 401 && provider.authenticationHint !== undefined)
          expect(failure.message).toContain(provider.authenticationHint);
        expect(current.fake.requests).toHaveLength(1);
      },
    );

    it('retries a stream that fails midway with an error of the server', async () => {
      current.fake.enqueue(provider.streamError.reply);
      const deltas: string[] = [];
      const failure = await failureOf(
        current.model.complete(request({ onTextDelta: (delta) => deltas.push(delta) })),
      );
      expect(deltas).toHaveLength(2);
      expect(failure).toMatchObject({ type: provider.streamError.failure, nonRetryable: false });
      if (provider.streamError.message !== undefined)
        expect(failure.message).toContain(provider.streamError.message);
    });

    it('retries a connection reset', async () => {
      current.fake.enqueue({ kind: 'reset' });
      expect(await failureOf(current.model.complete(request()))).toMatchObject({
        type: 'ModelConnectionError',
        nonRetryable: false,
      });
    });

    it.each<[string, Fault]>([
      ['goes silent midway', { kind: 'stall', afterDeltas: 1 }],
      ['never answers', { kind: 'hang' }],
    ])('abandons a stream that %s and retries it, naming the server', async (_, fault) => {
      current.fake.enqueue(fault);
      const failure = await failureOf(current.model.complete(request()));
      expect(failure).toMatchObject({ type: 'ModelStreamStalled', nonRetryable: false });
      expect(failure.message).toContain(`no data from ${provider.label} for 1.5 s`);
    });

    it('aborts the HTTP request when the call is cancelled', async () => {
      current.fake.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const pending = current.model.complete(request({ signal: controller.signal }));
      await current.fake.waitForRequests(1);
      const reason = new Error('cancelled by Temporal');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
    });
  });
}

itBehavesLikeAProvider(anthropic);
itBehavesLikeAProvider(openai);
itBehavesLikeAProvider(ollama);
