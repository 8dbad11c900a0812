/**
 * A thread's budget is a ceiling, not a threshold (issue 37, decision 0425): measured from the
 * provider's side, by what the protocol-faithful Anthropic fake billed, never more than the
 * limit — through answers of any length, a storm of provider faults and retries, and five
 * sub-agents spending at once. And the thread's ledger never holds less than was billed.
 */
import type { Run } from '../../common/run';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { costlyResponder as responder, firstText } from '../fakes/costly-responder';
import { TestConversation } from '../helpers/conversation';
import { workerHarness } from '../helpers/worker-harness';

const model = 'anthropic:claude-sonnet-4-5';
/** What the worker's price table charges for it, dollars per million tokens. */
const price = { input: 3, output: 15 };

describe('budgets as ceilings (real Temporal, fake Messages API)', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic({ responder });
  });
  const setup = workerHarness(() => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url }));
  afterAll(() => fake.close());

  /** What the fake billed from here on, in tokens and in dollars at the model's prices. */
  function meter() {
    const from = fake.billed.length;
    return () => {
      const billed = fake.billed.slice(from);
      const tokens = billed.reduce((sum, entry) => sum + entry.input_tokens + entry.output_tokens, 0);
      const dollars = billed.reduce(
        (sum, entry) => sum + (entry.input_tokens * price.input + entry.output_tokens * price.output) / 1e6,
        0,
      );
      return { calls: billed.length, tokens, dollars };
    };
  }

  /** Asks turns until the budget ends a run (or `most` turns passed): the runs, in order. */
  async function askUntilStopped(conversation: TestConversation, most = 8): Promise<Run[]> {
    const runs: Run[] = [];
    for (let turn = 0; turn < most; turn++) {
      const run = await conversation.ask(`turn ${turn}: tell me more`);
      runs.push(run);
      if (run.status_reason === 'budget_exceeded') break;
    }
    return runs;
  }

  /** The input tokens of a thread's first call: what one call costs at the least. */
  let firstInput = 0;
  beforeAll(async () => {
    const probe = await TestConversation.start(setup.client, setup.config, { model });
    const billed = meter();
    expect((await probe.ask('turn 0: tell me more')).status).toBe('completed');
    expect(billed().calls).toBe(1);
    firstInput = fake.billed.at(-1)!.input_tokens;
    expect(firstInput).toBeGreaterThan(300);
  });

  it('refuses the first call before any request when the budget is below one call', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, { model, max_tokens: 300 });
    const requests = fake.requests.length;
    const counts = fake.counts;
    const run = await conversation.ask('turn 0: tell me more');
    expect(run).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(run.error?.type).toBe('BudgetExceeded');
    expect(run.error?.message).toMatch(/needs at least \d+ tokens .* and the thread has 300 tokens left/);
    expect(fake.requests.length).toBe(requests);
    expect(fake.counts).toBe(counts + 1);
    expect((await conversation.thread()).usage.input_tokens).toBe(0);
  });

  it('never bills more than a token ceiling over turns of varying length, and the ledger holds what was billed', async () => {
    // Room for the first turn and part of the second: its answer is cut, and the third is refused.
    const ceiling = firstInput * 2 + 600;
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model,
      max_tokens: ceiling,
    });
    const billed = meter();
    const runs = await askUntilStopped(conversation);
    expect(runs.at(-1)).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    const spent = billed();
    expect(spent.calls).toBeGreaterThanOrEqual(2);
    expect(spent.tokens).toBeLessThanOrEqual(ceiling);
    // An answer the budget cut short says so.
    expect(runs.some((run) => run.status_reason === 'max_tokens')).toBe(true);
    const thread = await conversation.thread();
    expect(thread.summary.tokens).toBe(spent.tokens);
  });

  it('never bills more than a dollar ceiling over turns of varying length', async () => {
    const ceiling = 0.02;
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model,
      max_cost_usd: ceiling,
    });
    const billed = meter();
    const runs = await askUntilStopped(conversation);
    expect(runs.at(-1)).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    const spent = billed();
    expect(spent.calls).toBeGreaterThanOrEqual(2);
    expect(spent.dollars).toBeLessThanOrEqual(ceiling);
    expect((await conversation.thread()).usage.cost_usd).toBeCloseTo(spent.dollars, 6);
  });

  it('counts every billed attempt through a storm of faults and retries, and still never bills more than the ceiling', async () => {
    // A broken stream reserved its input and a whole answer (8,192): 500 are left for the retry.
    const ceiling = firstInput * 2 + 8_192 + 500;
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model,
      max_tokens: ceiling,
    });
    const billed = meter();
    const requests = fake.requests.length;
    fake.enqueue(
      { kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' },
      { kind: 'stream-error', type: 'overloaded_error', message: 'Overloaded', afterDeltas: 5 },
      { kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' },
    );
    const run = await conversation.ask('at length, please');
    expect(fake.requests.length - requests).toBe(4);
    const spent = billed();
    // The 500 and the 529 were refused before an answer began: the broken stream and the answer billed.
    expect(spent.calls).toBe(2);
    expect(spent.tokens).toBeLessThanOrEqual(ceiling);
    // The broken stream counts at what it reserved: the ledger never holds less than was billed.
    const thread = await conversation.thread();
    expect(thread.summary.tokens).toBeGreaterThanOrEqual(spent.tokens);
    expect(thread.summary.tokens).toBeLessThanOrEqual(ceiling);
    // What the storm left was too little for the whole answer: it was cut short, not overrun.
    expect(run).toMatchObject({ status: 'completed', status_reason: 'max_tokens' });
    expect(fake.requests.at(-1)!.body.max_tokens).toBeLessThanOrEqual(510);
    // And the next turn is refused before any request.
    const next = await conversation.ask('turn 1: tell me more');
    expect(next).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(fake.requests.length - requests).toBe(4);
  });

  it('keeps five sub-agents spending at once within their parent’s ceiling, their answers streamed over seconds', async () => {
    const ceiling = firstInput * 12;
    const parent = await TestConversation.start(setup.client, setup.config, { model, max_tokens: ceiling });
    const billed = meter();
    // As a real model: the first token after 0.4 s, then a token every 3 ms, so the five
    // children's answers stream at once for seconds and overlap, each billed as it goes.
    fake.setResponder((request) => {
      const reply = responder(request);
      return reply.kind === 'message' ? { ...reply, firstTokenDelayMs: 400, tokenDelayMs: 3 } : reply;
    });
    const startedAt = Date.now();
    const run = await parent.ask('spawn five sub-agents').finally(() => fake.setResponder(responder));
    const spent = billed();
    // The children's answers did stream over seconds (hundreds of tokens each at 3 ms).
    expect(Date.now() - startedAt).toBeGreaterThan(2_000);
    // The parent's call, five children's, and (if anything was left) the parent's last.
    expect(spent.calls).toBeGreaterThanOrEqual(6);
    expect(spent.tokens).toBeLessThanOrEqual(ceiling);
    const thread = await parent.thread();
    expect(thread.summary.tokens).toBe(spent.tokens);
    expect(['completed', 'failed']).toContain(run.status);
    if (run.status === 'failed') expect(run.status_reason).toBe('budget_exceeded');
    // Each child was given a share, not the parent's whole budget.
    const childLimits = fake.requests
      .filter((request) => firstText(request.body).startsWith('sub-task'))
      .map((request) => request.body.max_tokens);
    expect(childLimits).toHaveLength(5);
    for (const limit of childLimits) expect(limit).toBeLessThan(ceiling / 5);
  });
});
