/**
 * 14. Budget ceilings (issue 37, decision 0425): how far past its limit a thread goes, measured
 * from outside, by what the fake Anthropic server billed (input and output tokens, dollars at
 * the worker's Sonnet prices), for the cases of the table. Run on this tree, then on the
 * commit before the ceiling, for BENCHMARKS.md's before/after table.
 */
import { randomUUID } from 'node:crypto';
import type { FakeAnthropic } from '../../test/fakes/anthropic-server';
import { costlyResponder as responder } from '../../test/fakes/costly-responder';
import type { System } from '../harness';
import { progress } from '../progress';
import type { Row, ScenarioResult } from '../report';
import { workerKilledMidCall } from './budget-killed-worker';

const model = 'anthropic:claude-sonnet-4-5';
const price = { input: 3, output: 15 };
/** The owner's day quota in the ten-threads case, as in test/api/owner-quota.test.ts. */
const ownerDayQuota = 0.05;

interface Limits {
  max_tokens?: number;
  max_cost_usd?: number;
}

async function post(base: string, route: string, body: unknown): Promise<string> {
  const response = await fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`POST ${route}: HTTP ${response.status} ${text.slice(0, 200)}`);
  return text;
}

const baseOf = (system: System | string): string => (typeof system === 'string' ? system : system.apiUrl);

/** Ten threads of one owner (the install's) asking at once for 2,000 words each. */
async function tenThreadsAtOnce(base: string): Promise<void> {
  const threads = await Promise.all(Array.from({ length: 10 }, () => thread(base, {})));
  await Promise.all(threads.map((threadId) => ask(base, threadId, 'at length')));
}

/** A new thread on the model with `limits`. */
async function thread(system: System | string, limits: Limits): Promise<string> {
  const threadId = `bench-budget-${randomUUID()}`;
  await post(baseOf(system), '/threads', { thread_id: threadId, config: { model, ...limits } });
  return threadId;
}

/** One turn: the run's answer, or its error (which names the budget when it stopped the run). */
const ask = (system: System | string, threadId: string, text: string): Promise<string> =>
  post(baseOf(system), `/threads/${threadId}/runs/wait?timeout_s=300`, {
    input: { messages: [{ role: 'user', content: text }] },
  });

/** Runs `work`, and returns what the fake billed meanwhile. */
async function billed(
  fake: FakeAnthropic,
  work: () => Promise<void>,
): Promise<{ tokens: number; usd: number }> {
  const from = fake.billed.length;
  await work();
  // Children may still be answering when their parent's turn ends: let the fake go quiet.
  let seen = -1;
  while (seen !== fake.billed.length) {
    seen = fake.billed.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }
  const entries = fake.billed.slice(from);
  return {
    tokens: entries.reduce((sum, entry) => sum + entry.input_tokens + entry.output_tokens, 0),
    usd: entries.reduce(
      (sum, entry) => sum + (entry.input_tokens * price.input + entry.output_tokens * price.output) / 1e6,
      0,
    ),
  };
}

/** Turns until a run ends on the budget (its answer says so), at most `most`. */
async function turnsUntilStopped(system: System, limits: Limits, most = 6): Promise<void> {
  const threadId = await thread(system, limits);
  for (let turn = 0; turn < most; turn++) {
    const body = await ask(system, threadId, `turn ${turn}: tell me more`);
    if (/budget/i.test(body)) return;
  }
}

export async function budgetCeiling(system: System, fake: FakeAnthropic): Promise<ScenarioResult> {
  fake.setResponder(responder);
  // One first turn without limits: what one call costs at the least, to size the ceilings by.
  const probe = await billed(fake, async () => {
    await ask(system, await thread(system, {}), 'turn 0: tell me more');
  });
  const cases: Array<{ name: string; unit: 'tokens' | 'usd'; ceiling: number; run: () => Promise<void> }> = [
    {
      name: 'max_tokens 300 (below one call)',
      unit: 'tokens',
      ceiling: 300,
      run: () => turnsUntilStopped(system, { max_tokens: 300 }),
    },
    {
      name: 'max_tokens: room for 2.5 turns',
      unit: 'tokens',
      ceiling: Math.round(probe.tokens * 2.5),
      run: () => turnsUntilStopped(system, { max_tokens: Math.round(probe.tokens * 2.5) }),
    },
    {
      name: 'max_cost_usd $0.02, answers of varying length',
      unit: 'usd',
      ceiling: 0.02,
      run: () => turnsUntilStopped(system, { max_cost_usd: 0.02 }),
    },
    {
      name: 'five sub-agents at once under one parent, $0.02',
      unit: 'usd',
      ceiling: 0.02,
      run: async () => {
        await ask(system, await thread(system, { max_cost_usd: 0.02 }), 'spawn five sub-agents');
      },
    },
    {
      name: 'a broken stream and a 529, then the answer, $0.01',
      unit: 'usd',
      ceiling: 0.01,
      run: async () => {
        fake.enqueue(
          { kind: 'stream-error', type: 'overloaded_error', message: 'Overloaded', afterDeltas: 200 },
          { kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' },
        );
        await turnsUntilStopped(system, { max_cost_usd: 0.01 });
      },
    },
    {
      name: 'a worker SIGKILLed mid-call, $0.01',
      unit: 'usd',
      ceiling: 0.01,
      run: async () => {
        await workerKilledMidCall(system, fake, 0.01, responder);
      },
    },
    {
      name: 'ten threads of one owner at once, no owner quota (before)',
      unit: 'usd',
      ceiling: ownerDayQuota,
      run: () => tenThreadsAtOnce(system.apiUrl),
    },
    {
      name: `ten threads of one owner at once, a day quota of $${ownerDayQuota}`,
      unit: 'usd',
      ceiling: ownerDayQuota,
      run: async () => {
        // An API of its own with the quota (decision 0440): the ledger admits each run with a share.
        const api = await system.startApi({
          KEEL_QUOTA_DAY_USD: String(ownerDayQuota),
          KEEL_QUOTA_CONCURRENT_RUNS: '10',
        });
        try {
          await tenThreadsAtOnce(api.url);
        } finally {
          await api.process.stop();
        }
      },
    },
  ];
  const rows: Row[] = [];
  const data: Record<string, unknown> = { probe };
  for (const [index, one] of cases.entries()) {
    const spent = await billed(fake, one.run);
    const recorded = one.unit === 'tokens' ? spent.tokens : spent.usd;
    const over = (recorded / one.ceiling - 1) * 100;
    data[one.name] = { ceiling: one.ceiling, recorded, over_percent: over };
    const shown = (value: number) => (one.unit === 'tokens' ? `${value} tokens` : `$${value.toFixed(4)}`);
    rows.push({
      scenario: '14. budget',
      metric: one.name,
      value: `${shown(recorded)} of ${shown(one.ceiling)}`,
      note: over > 0 ? `+${over.toFixed(0)} % over` : 'within',
    });
    progress.count('cases', index + 1, cases.length);
  }
  return { rows, data };
}
