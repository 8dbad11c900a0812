/**
 * Owner quotas (issue 37, decision 0440), measured from the provider's side: ten threads of one
 * owner running at once against a small daily quota never make the protocol-faithful Anthropic
 * fake bill more than the quota, and the owner's ledger holds all that was billed; one more run
 * than the concurrency quota allows is refused 429 with Retry-After before it reaches a thread;
 * another owner is unaffected; and the ledger outlives the API that wrote to it.
 */
import type { RunningApi } from '../../api/server';
import type { QuotaView } from '../../common/quota';
import type { Run } from '../../common/run';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { costlyResponder } from '../fakes/costly-responder';
import { apiHarness, call, startTestApi, userInput } from '../helpers/api';

jest.setTimeout(120_000);

/** What the worker's price table charges for the model, dollars per million tokens. */
const price = { input: 3, output: 15 };
const dayQuota = 0.05;
const threads = 10;

const alice = { authorization: 'Bearer alice-token-0123456789' };
const bob = { authorization: 'Bearer bob-token-0123456789' };

describe('owner quotas (real Temporal, real API, fake Messages API)', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    // As a real model: each answer takes a moment to begin, so the ten runs are under way
    // together, and then streams a token every 10 ms, billed as it goes.
    fake = await startFakeAnthropic({
      responder: (request) =>
        ({ ...costlyResponder(request), firstTokenDelayMs: 1_500, tokenDelayMs: 10 }) as ReturnType<
          typeof costlyResponder
        >,
    });
  });
  const harness = apiHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    KEEL_MODEL: 'anthropic:claude-sonnet-4-5',
    KEEL_API_TOKENS: 'alice:alice-token-0123456789,bob:bob-token-0123456789',
    KEEL_QUOTA_DAY_USD: String(dayQuota),
    KEEL_QUOTA_CONCURRENT_RUNS: String(threads),
  }));
  let restarted: RunningApi | undefined;
  afterAll(async () => {
    await restarted?.stop();
    await fake.close();
  });

  const dollars = (from: number): number =>
    fake.billed
      .slice(from)
      .reduce(
        (sum, entry) => sum + (entry.input_tokens * price.input + entry.output_tokens * price.output) / 1e6,
        0,
      );

  async function newThread(headers: Record<string, string>): Promise<string> {
    const made = await call<{ thread_id: string }>(harness.base, 'POST', '/threads', {}, headers);
    expect(made.status).toBe(200);
    return made.body.thread_id;
  }

  /** The owner's quota once no run of theirs is under way (settling follows a run's end). */
  async function settledQuota(base: string, headers: Record<string, string>): Promise<QuotaView> {
    for (let tries = 0; ; tries++) {
      const quota = await call<QuotaView>(base, 'GET', '/quota', undefined, headers);
      expect(quota.status).toBe(200);
      if (quota.body.runs.active === 0 || tries >= 100) return quota.body;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  let spent = 0;

  it('holds ten threads of one owner at once to the quota, refuses the eleventh with 429 and Retry-After, and leaves another owner alone', async () => {
    const ids = await Promise.all(Array.from({ length: threads }, () => newThread(alice)));
    const extra = await newThread(alice);
    const bobs = await newThread(bob);
    const from = fake.billed.length;
    // Every run asks for far more than a tenth of the quota: 2,000 words each.
    const started = await Promise.all(
      ids.map((id) => call<Run>(harness.base, 'POST', `/threads/${id}/runs`, userInput('at length'), alice)),
    );
    for (const answer of started) expect(answer.status).toBe(200);
    expect(started.every((answer) => answer.body.quota?.cost_usd !== undefined)).toBe(true);

    const refused = await call(harness.base, 'POST', `/threads/${extra}/runs`, userInput('at length'), alice);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { type: 'rate_limit_error', code: 'concurrency_limit' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Nothing of the refused run reached its thread.
    const extraRuns = await call<Run[]>(harness.base, 'GET', `/threads/${extra}/runs`, undefined, alice);
    expect(extraRuns.body).toEqual([]);

    // Another owner's run, at the same moment, is admitted (on the scripted model: it bills nothing).
    const bobsRun = await call<Run>(
      harness.base,
      'POST',
      `/threads/${bobs}/runs/wait`,
      userInput('hello', { config: { model: 'scripted:demo' } }),
      bob,
    );
    expect(bobsRun.status).toBe(200);

    const ended = await Promise.all(
      started.map((answer, index) =>
        call<Run>(
          harness.base,
          'GET',
          `/threads/${ids[index]}/runs/${answer.body.run_id}/join`,
          undefined,
          alice,
        ),
      ),
    );
    const runs = await Promise.all(
      ids.map(
        async (id, index) =>
          (
            await call<Run>(
              harness.base,
              'GET',
              `/threads/${id}/runs/${started[index]!.body.run_id}`,
              undefined,
              alice,
            )
          ).body,
      ),
    );
    expect(ended.every((answer) => answer.status === 200)).toBe(true);
    // Each run's share cut its answer short, none was refused outright.
    expect(runs.map((run) => run.status_reason)).toEqual(runs.map(() => 'max_tokens'));

    const billed = dollars(from);
    expect(billed).toBeGreaterThan(dayQuota / 2);
    expect(billed).toBeLessThanOrEqual(dayQuota);
    const quota = await settledQuota(harness.base, alice);
    expect(quota.runs).toEqual({ active: 0, limit: threads });
    expect(quota.day.reserved_usd).toBe(0);
    // Nothing already paid for is lost from the ledger: it holds what the provider billed.
    expect(quota.day.spent_usd).toBeGreaterThanOrEqual(billed - 1e-6 * threads);
    expect(quota.day.spent_usd).toBeCloseTo(billed, 5);
    expect(quota.day.left_usd).toBeCloseTo(dayQuota - quota.day.spent_usd, 6);
    expect(quota.month.spent_usd).toBe(quota.day.spent_usd);
    spent = quota.day.spent_usd;

    const metrics = await fetch(`${harness.base}/metrics`, { headers: alice }).then((answer) =>
      answer.text(),
    );
    expect(metrics).toMatch(/keel_refusals_total\{reason="concurrency"\} 1/);

    const bobsQuota = await settledQuota(harness.base, bob);
    expect(bobsQuota.day.spent_usd).toBe(0);
    expect(bobsQuota.day.left_usd).toBe(dayQuota);
  });

  it('keeps the ledger across an API restart, and refuses spend with quota_exceeded once the quota is spent', async () => {
    expect(spent).toBeGreaterThan(0);
    await harness.api.stop();
    // The operator lowers the day's quota below what alice spent, and starts the API again.
    const config = { ...harness.config, quota: { ...harness.config.quota, day_usd: spent / 2 } };
    restarted = await startTestApi(harness.client, config);
    const quota = await settledQuota(restarted.url, alice);
    expect(quota.day).toMatchObject({ spent_usd: spent, reserved_usd: 0, limit_usd: spent / 2, left_usd: 0 });

    const thread = (await call<{ thread_id: string }>(restarted.url, 'POST', '/threads', {}, alice)).body
      .thread_id;
    const requests = fake.requests.length;
    const refused = await call(
      restarted.url,
      'POST',
      `/threads/${thread}/runs/wait`,
      userInput('hello'),
      alice,
    );
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { type: 'rate_limit_error', code: 'quota_exceeded' } });
    expect(String((refused.body as { detail: string }).detail)).toMatch(/quota of \$[\d.]+ a day is spent/);
    // Until the next UTC midnight at most.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(fake.requests.length).toBe(requests);

    const metrics = await fetch(`${restarted.url}/metrics`, { headers: alice }).then((answer) =>
      answer.text(),
    );
    expect(metrics).toMatch(/keel_refusals_total\{reason="quota_exceeded"\} 1/);
  });
});
