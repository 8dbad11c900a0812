/** For reducer tests: a thread whose run `r1` asked the model once and got `result` back. */
import type { CallModelResult } from '../../common/activities';
import type { ApprovalMode, ThreadConfig } from '../../common/thread';
import { reduce } from '../../workflows/core/reducer';
import { type ThreadState, initialState } from '../../workflows/core/state';
import type { Command } from '../../workflows/core/transitions';

export const t0 = Date.parse('2026-01-01T00:00:00Z');

export const usage = {
  input_tokens: 3,
  output_tokens: 2,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cost_usd: 0,
};

/** A model call of one token each way, at no cost. */
export const oneTokenUsage = { ...usage, input_tokens: 1, output_tokens: 1 };

/** A new thread `t1`, made at `t0`, on the scripted model: `config` over Keel's test defaults. */
export const freshThread = (config: Partial<ThreadConfig> = {}): ThreadState =>
  initialState({
    thread_id: 't1',
    metadata: {},
    config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 300, max_steps: 5, ...config },
    created_at: new Date(t0).toISOString(),
  });

export function afterFirstAnswer(
  result: CallModelResult,
  approval: ApprovalMode = 'auto',
): { state: ThreadState; commands: Command[] } {
  const submitted = reduce(freshThread({ approval, approval_timeout_s: 60 }), {
    type: 'inputSubmitted',
    now: t0 + 1,
    input: {
      run_id: 'r1',
      assistant_id: 'agent',
      content: [{ type: 'text', text: 'go' }],
      multitask_strategy: 'enqueue',
      metadata: {},
    },
  });
  return reduce(submitted.state, { type: 'modelResponded', now: t0 + 2, run_id: 'r1', step: 1, result });
}
