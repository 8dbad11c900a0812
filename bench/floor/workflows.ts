/**
 * The raw Temporal floor: the least a durable step can cost on this server. Minimal workflows
 * with no state, events or queries beyond what the measurement needs.
 */
import {
  allHandlersFinished,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { searchAttributes } from '../../common/search-attributes';
import type { FloorActivities } from './activities';
import {
  floorCloseSignal,
  type FloorConversationOptions,
  type FloorTurnInput,
  floorTurnUpdate,
} from './conversation';

const { noop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

/** Runs `activities` no-op activities one after another. */
export async function floorWorkflow(activities: number): Promise<void> {
  for (let step = 0; step < activities; step++) await noop();
}

// The timeouts and retry policies of Keel's model and tool calls
// (workflows/interpreter/activity-options.ts): the server keeps the same timers for them.
const modelRetry = { initialInterval: '1 second', backoffCoefficient: 1, maximumAttempts: 50 };
const { model } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: modelRetry,
});
const { model: localModel } = proxyLocalActivities<FloorActivities>({
  startToCloseTimeout: '10 minutes',
  retry: modelRetry,
  cancellationType: 'TRY_CANCEL',
});
const { tool } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * A conversation of the shape Keel's is, with nothing of Keel's in it: a long-lived workflow that
 * takes each turn by an update answered when the turn ends (Keel's `submitInput` with
 * `{ wait: true }`), and runs the turn in its main loop: model, tool, model, each a no-op that
 * returns what it was given. Ends on `floorClose` once every turn is answered.
 */
export async function floorConversation(options: FloorConversationOptions): Promise<number> {
  const pending: FloorTurnInput[] = [];
  const answers = new Map<string, string>();
  let closed = false;
  let turns = 0;
  setHandler(floorTurnUpdate, async (input) => {
    pending.push(input);
    await condition(() => answers.has(input.turn_id));
    const answer = answers.get(input.turn_id)!;
    answers.delete(input.turn_id);
    return answer;
  });
  setHandler(floorCloseSignal, () => {
    closed = true;
  });
  const callModel = options.localModelCalls ? localModel : model;
  const publish = (busy: boolean): void => {
    if (!options.searchAttributes) return;
    upsertSearchAttributes([
      { key: searchAttributes.status, value: busy ? 'busy' : 'idle' },
      { key: searchAttributes.costUsd, value: turns * 0.001 },
      { key: searchAttributes.turns, value: turns },
      { key: searchAttributes.model, value: 'floor' },
      { key: searchAttributes.runStatuses, value: busy ? ['running'] : [] },
    ]);
  };
  for (;;) {
    await condition(() => pending.length > 0 || closed);
    const input = pending.shift();
    if (input === undefined) break;
    turns++;
    publish(true);
    const asked = await callModel(input.payload);
    const output = await tool(asked);
    answers.set(input.turn_id, await callModel(output));
    publish(false);
  }
  await condition(allHandlersFinished);
  return turns;
}
