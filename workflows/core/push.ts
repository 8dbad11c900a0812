/**
 * A2A push notification configs (decision 0485): kept on the state per unfinished run; when the
 * run ends, each becomes a `sendWebhook` command whose body is the A2A task in a `StreamResponse`
 * (`{"task": …}`, as A2A v1.0 and its SDK's sender POST it), with the config's token or
 * credentials as headers, and the run's configs are dropped. When the run comes to wait on an
 * approval (`TASK_STATE_INPUT_REQUIRED`), each config gets the task too, and stays (decision
 * 0505; the interpreter sends those only since `keel-a2a-push-input-required`). Pure, as the
 * reducer is.
 */
import { taskJsonOf } from '../../common/a2a-task';
import {
  maxPushConfigsPerRun,
  notificationTokenHeader,
  type PushConfig,
  type PushConfigRef,
} from '../../common/a2a-push';
import type { SendWebhookInput } from '../../common/activities';
import { isTerminal, type Run } from '../../common/run';
import { pendingApprovals } from './approvals';
import { findRun, type ThreadState } from './state';
import type { Command, Transition } from './transitions';
import type { Rejection } from '../../common/input-rules';

const endEvents: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** A run's configs, none when it has none. */
export const pushConfigsOf = (state: ThreadState, runId: string): PushConfig[] =>
  state.push_configs?.find((entry) => entry.run_id === runId)?.configs ?? [];

export function validateSetPushConfig(
  state: ThreadState,
  runId: string,
  config: PushConfig,
): Rejection | undefined {
  const run = findRun(state, runId);
  if (run === undefined) return { type: 'RunNotFound', message: `no run ${runId} on this thread` };
  if (isTerminal(run.status))
    return {
      type: 'InvalidInput',
      message: `run ${runId} has ended (${run.status}): nothing left to notify`,
    };
  const configs = pushConfigsOf(state, runId);
  if (configs.length >= maxPushConfigsPerRun && !configs.some(({ id }) => id === config.id))
    return {
      type: 'InvalidInput',
      message: `at most ${maxPushConfigsPerRun} push notification configs per task`,
    };
  return undefined;
}

export function validateDeletePushConfig(state: ThreadState, ref: PushConfigRef): Rejection | undefined {
  if (!pushConfigsOf(state, ref.run_id).some(({ id }) => id === ref.config_id))
    return {
      type: 'RunNotFound',
      message: `no push notification config ${ref.config_id} on run ${ref.run_id}`,
    };
  return undefined;
}

function withConfigs(state: ThreadState, runId: string, configs: PushConfig[]): ThreadState {
  const others = (state.push_configs ?? []).filter((entry) => entry.run_id !== runId);
  const next = configs.length === 0 ? others : [...others, { run_id: runId, configs }];
  const { push_configs: _old, ...rest } = state;
  return next.length === 0 ? rest : { ...rest, push_configs: next };
}

/** Registers a config, replacing one of the same id. */
export function setPushConfig(state: ThreadState, runId: string, config: PushConfig): Transition {
  const configs = pushConfigsOf(state, runId).filter(({ id }) => id !== config.id);
  return { state: withConfigs(state, runId, [...configs, config]), commands: [] };
}

export function deletePushConfig(state: ThreadState, runId: string, configId: string): Transition {
  const configs = pushConfigsOf(state, runId).filter(({ id }) => id !== configId);
  return { state: withConfigs(state, runId, configs), commands: [] };
}

function headersOf(config: PushConfig): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/a2a+json' };
  if (config.authentication !== undefined)
    headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;
  else if (config.token !== undefined && config.token !== '') headers[notificationTokenHeader] = config.token;
  return headers;
}

/** One POST of `run` as a task to `config`, its id stable across retries and replays. */
function deliveryOf(
  run: Run,
  config: PushConfig,
  moment: string,
  body: { task: Record<string, unknown> },
): SendWebhookInput {
  return {
    url: config.url,
    webhook_id: `msg_${run.run_id}_${moment}_a2a_${config.id}`,
    timestamp: Math.floor(Date.parse(run.updated_at) / 1000),
    payload: body,
    headers: headersOf(config),
    summary: `A2A push ${moment}`,
  };
}

/**
 * The deliveries of the runs among `commands` that came to wait on an approval: the task, in
 * `TASK_STATE_INPUT_REQUIRED` with what it asks, to each of the run's configs, which stay. One
 * per run and approval step (named by its first approval), however many calls the step asks for.
 */
function inputRequiredDeliveries(state: ThreadState, commands: readonly Command[]): Command[] {
  const asked = new Map<string, string>();
  for (const command of commands)
    if (command.type === 'emit' && command.event.event === 'approval.requested') {
      const { run_id: runId, approval_id: approvalId } = command.event.data as {
        run_id: string;
        approval_id: string;
      };
      if (!asked.has(runId)) asked.set(runId, approvalId);
    }
  const sends: Command[] = [];
  for (const [runId, approvalId] of asked) {
    const run = findRun(state, runId);
    const configs = pushConfigsOf(state, runId);
    if (run === undefined || isTerminal(run.status) || run.status_reason !== 'awaiting_approval') continue;
    if (configs.length === 0) continue;
    const body = { task: taskJsonOf(run, pendingApprovals(state)) };
    for (const config of configs)
      sends.push({
        type: 'sendWebhook',
        delivery: deliveryOf(run, config, `input_required_${approvalId}`, body),
        gate: 'inputRequiredPush',
      });
  }
  return sends;
}

/**
 * The deliveries of the runs among `commands` that ended, to their configs, and the state
 * without those configs; and of the runs that came to wait on an approval, to theirs. Unchanged
 * when no run with configs did either.
 */
export function pushDeliveries(state: ThreadState, commands: readonly Command[]): Transition {
  if (state.push_configs === undefined) return { state, commands: [] };
  let next = state;
  const sends: Command[] = inputRequiredDeliveries(state, commands);
  for (const command of commands) {
    if (command.type !== 'emit' || !endEvents.has(command.event.event)) continue;
    if (!('run' in command.event.data)) continue;
    const { run } = command.event.data;
    const configs = pushConfigsOf(next, run.run_id);
    if (configs.length === 0) continue;
    const body = { task: taskJsonOf(run) };
    // Stable across retries and replays: one id per run, end and config.
    for (const config of configs)
      sends.push({ type: 'sendWebhook', delivery: deliveryOf(run, config, run.status, body) });
    next = withConfigs(next, run.run_id, []);
  }
  return { state: next, commands: sends };
}
