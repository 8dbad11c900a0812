/** The pure pieces of issue 4: webhook deliveries, the active-run index, first offsets, child usage. */
import type { SubmitInput } from '../../common/messages';
import type { Run } from '../../common/run';
import { reduce } from '../../workflows/core/reducer';
import { activeRunStatuses } from '../../workflows/core/run-index';
import { type ThreadState, findRun } from '../../workflows/core/state';
import type { Command } from '../../workflows/core/transitions';
import { webhookDeliveries } from '../../workflows/core/webhooks';
import { pushConfigsOf, validateSetPushConfig } from '../../workflows/core/push';
import { freshThread, oneTokenUsage, t0 } from '../helpers/reducer';

const fresh = (): ThreadState => freshThread();

const input = (run_id: string, extra: Partial<SubmitInput> = {}): SubmitInput => ({
  run_id,
  assistant_id: 'agent',
  content: [{ type: 'text', text: 'hello' }],
  multitask_strategy: 'enqueue',
  metadata: {},
  ...extra,
});

const runEvent = (event: 'run.completed' | 'run.started' | 'run.deferred', run: Partial<Run>): Command => ({
  type: 'emit',
  event: {
    event,
    data: {
      run: {
        run_id: 'r1',
        thread_id: 't1',
        assistant_id: 'agent',
        status: 'completed',
        multitask_strategy: 'enqueue',
        metadata: {},
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:05.000Z',
        steps: 1,
        usage: oneTokenUsage,
        model: 'scripted:demo',
        ...run,
      } as Run,
    },
  },
});

describe('webhook deliveries', () => {
  it.each([
    ['a completed run with a webhook', runEvent('run.completed', { webhook: 'http://h/x', output: 'hi' }), 1],
    [
      'a deferred run with a webhook',
      runEvent('run.deferred', { webhook: 'http://h/x', status: 'deferred' }),
      1,
    ],
    [
      'a started run (not a webhook event)',
      runEvent('run.started', { webhook: 'http://h/x', status: 'running' }),
      0,
    ],
    ['a completed run without a webhook', runEvent('run.completed', {}), 0],
  ])('%s → %i deliveries', (_name, command, count) => {
    expect(webhookDeliveries([command])).toHaveLength(count);
  });

  it('names each delivery by run and status, so every retry and replay carries the same webhook-id', () => {
    const [delivery] = webhookDeliveries([
      runEvent('run.completed', { webhook: 'http://h/x', output: 'the answer' }),
    ]);
    expect(delivery).toEqual({
      url: 'http://h/x',
      webhook_id: 'msg_r1_completed',
      timestamp: Date.parse('2026-01-01T00:00:05.000Z') / 1000,
      payload: {
        type: 'run.completed',
        timestamp: '2026-01-01T00:00:05.000Z',
        data: { run: expect.objectContaining({ run_id: 'r1' }), output: 'the answer' },
      },
    });
  });
});

describe('webhooks in the reducer', () => {
  const kinds = (commands: Command[]) =>
    commands.map((command) => (command.type === 'emit' ? command.event.event : command.type));

  it('sends a run’s webhook when it is deferred and when it ends, after the transition’s other commands', () => {
    const hooked = input('r1', { webhook: 'http://h/x' });
    const started = reduce(fresh(), { type: 'inputSubmitted', now: t0, input: hooked });
    expect(kinds(started.commands)).not.toContain('sendWebhook');
    const deferred = reduce(started.state, { type: 'runDeferred', now: t0 + 1, run_id: 'r1' });
    expect(deferred.commands.at(-1)).toMatchObject({
      type: 'sendWebhook',
      delivery: { url: 'http://h/x', webhook_id: 'msg_r1_deferred', payload: { type: 'run.deferred' } },
    });
    const cancelled = reduce(deferred.state, { type: 'cancelRequested', now: t0 + 2, run_id: 'r1' });
    expect(kinds(cancelled.commands)).toEqual(['cancelActivities', 'run.cancelled', 'sendWebhook']);
    expect(cancelled.commands.at(-1)).toMatchObject({
      delivery: { webhook_id: 'msg_r1_cancelled', payload: { type: 'run.cancelled' } },
    });
  });

  it('sends nothing for a run without a webhook', () => {
    const started = reduce(fresh(), { type: 'inputSubmitted', now: t0, input: input('r1') });
    const cancelled = reduce(started.state, { type: 'cancelRequested', now: t0 + 2, run_id: 'r1' });
    expect(kinds([...started.commands, ...cancelled.commands])).not.toContain('sendWebhook');
  });
});

describe('A2A push notification configs in the reducer (decision 0485)', () => {
  const hook = { id: 'hook', url: 'http://h/a2a', token: 'tok' };
  const started = () => reduce(fresh(), { type: 'inputSubmitted', now: t0, input: input('r1') }).state;

  it('keeps a run’s configs, replaces one by id, deletes one, and refuses an ended or unknown run', () => {
    let state = reduce(started(), { type: 'pushConfigSet', now: t0, run_id: 'r1', config: hook }).state;
    state = reduce(state, {
      type: 'pushConfigSet',
      now: t0,
      run_id: 'r1',
      config: { id: 'other', url: 'http://h/other' },
    }).state;
    state = reduce(state, {
      type: 'pushConfigSet',
      now: t0,
      run_id: 'r1',
      config: { ...hook, token: 'new' },
    }).state;
    expect(pushConfigsOf(state, 'r1').map(({ id, token }) => [id, token])).toEqual([
      ['other', undefined],
      ['hook', 'new'],
    ]);
    state = reduce(state, { type: 'pushConfigDeleted', now: t0, run_id: 'r1', config_id: 'other' }).state;
    expect(pushConfigsOf(state, 'r1').map(({ id }) => id)).toEqual(['hook']);
    expect(validateSetPushConfig(state, 'nope', hook)?.type).toBe('RunNotFound');
    const ended = reduce(state, { type: 'cancelRequested', now: t0 + 2, run_id: 'r1' }).state;
    expect(validateSetPushConfig(ended, 'r1', hook)?.type).toBe('InvalidInput');
  });

  it('POSTs the ended task to each config once, with its token, and then forgets them', () => {
    const state = reduce(started(), { type: 'pushConfigSet', now: t0, run_id: 'r1', config: hook }).state;
    const cancelled = reduce(state, { type: 'cancelRequested', now: t0 + 2, run_id: 'r1' });
    expect(cancelled.commands.at(-1)).toMatchObject({
      type: 'sendWebhook',
      delivery: {
        url: 'http://h/a2a',
        webhook_id: 'msg_r1_cancelled_a2a_hook',
        headers: { 'X-A2A-Notification-Token': 'tok', 'content-type': 'application/a2a+json' },
        payload: { task: { id: 't1:r1', status: { state: 'TASK_STATE_CANCELED' } } },
      },
    });
    expect(cancelled.state.push_configs).toBeUndefined();
  });

  it('POSTs the task to each config when its run comes to wait on approvals, once per step, gated by its patch, and keeps the configs (decision 0505)', () => {
    const waiting = reduce(freshThread({ approval: 'require', approval_timeout_s: 60 }), {
      type: 'inputSubmitted',
      now: t0,
      input: input('r1'),
    }).state;
    const withHooks = [
      hook,
      { id: 'auth', url: 'http://h/auth', authentication: { scheme: 'Bearer', credentials: 'c' } },
    ].reduce(
      (state, config) => reduce(state, { type: 'pushConfigSet', now: t0, run_id: 'r1', config }).state,
      waiting,
    );
    const asked = reduce(withHooks, {
      type: 'modelResponded',
      now: t0 + 2,
      run_id: 'r1',
      step: 1,
      result: {
        content: ['a', 'b'].map((n, index) => ({
          type: 'tool_use',
          id: `u${index}`,
          name: 'bash',
          input: { n },
        })),
        stop_reason: 'tool_use',
        usage: oneTokenUsage,
        model: 'scripted-demo',
        tools: { bash: { sideEffects: true, sensitive: true } },
      },
    });
    const sends = asked.commands.filter((command) => command.type === 'sendWebhook');
    // Two calls wait, one step: one POST to each config, both with the two approvals.
    expect(sends).toHaveLength(2);
    const [first, second] = sends;
    expect(first).toMatchObject({
      gate: 'inputRequiredPush',
      delivery: {
        url: 'http://h/a2a',
        webhook_id: expect.stringMatching(/^msg_r1_input_required_.+_a2a_hook$/) as unknown,
        headers: { 'X-A2A-Notification-Token': 'tok' },
        payload: { task: { id: 't1:r1', status: { state: 'TASK_STATE_INPUT_REQUIRED' } } },
      },
    });
    expect(JSON.stringify(first!.delivery.payload)).toContain('approval_id');
    expect(second!.delivery.headers).toMatchObject({ authorization: 'Bearer c' });
    expect(second!.delivery.headers).not.toHaveProperty('X-A2A-Notification-Token');
    expect(pushConfigsOf(asked.state, 'r1').map(({ id }) => id)).toEqual(['hook', 'auth']);
    // Its end still goes to both, gated by nothing.
    const ended = reduce(asked.state, { type: 'cancelRequested', now: t0 + 3, run_id: 'r1' });
    const endSends = ended.commands.filter((command) => command.type === 'sendWebhook');
    expect(endSends.map((command) => command.gate)).toEqual([undefined, undefined]);
  });
});

describe('the run index and first offsets', () => {
  it('records where a run starts in the stream and lists the statuses of unfinished runs', () => {
    let state = reduce(fresh(), {
      type: 'inputSubmitted',
      now: t0,
      input: input('r1'),
      next_offset: 7,
    }).state;
    state = reduce(state, { type: 'inputSubmitted', now: t0, input: input('r2'), next_offset: 12 }).state;
    expect(findRun(state, 'r1')?.first_event_offset).toBe(7);
    expect(findRun(state, 'r2')?.first_event_offset).toBe(12);
    expect(activeRunStatuses(state)).toEqual(['queued', 'running']);
    state = reduce(state, { type: 'runDeferred', now: t0, run_id: 'r1' }).state;
    expect(activeRunStatuses(state)).toEqual(['deferred', 'queued']);
    state = reduce(state, { type: 'closeRequested', now: t0 }).state;
    expect(activeRunStatuses(state)).toEqual([]);
  });
});

describe('child usage', () => {
  it('adds a child agent’s usage to the thread and to the run that spawned it, and says so', () => {
    const started = reduce(fresh(), { type: 'inputSubmitted', now: t0, input: input('r1') }).state;
    const usage = {
      input_tokens: 100,
      output_tokens: 40,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost_usd: 0.5,
    };
    const { state, commands } = reduce(started, { type: 'childUsageReported', now: t0, run_id: 'r1', usage });
    expect(state.usage).toMatchObject({ input_tokens: 100, output_tokens: 40, cost_usd: 0.5 });
    expect(findRun(state, 'r1')?.usage).toMatchObject({ output_tokens: 40 });
    expect(commands).toEqual([
      {
        type: 'emit',
        event: {
          event: 'usage.updated',
          data: {
            run_id: 'r1',
            usage: expect.objectContaining({ output_tokens: 40 }),
            thread_usage: state.usage,
          },
        },
      },
    ]);
  });
});
