/**
 * The interpreter's activity calls: each runs one command's activity and feeds what came of it
 * back as an event, as the facts Temporal gave (the reducer decides what they mean).
 */
import {
  ActivityCancellationType,
  ApplicationFailure,
  TimeoutFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import {
  spentByAttempts,
  type KeelActivities,
  type SendWebhookInput,
  type StoppedModelCall,
  type ToolCallProgress,
} from '../../common/activities';
import { droppedResultOf } from '../../common/tools';
import type { Usage } from '../../common/usage';
import { innermostMessage, urlForLogs } from '../../common/urls';
import { summarizeModelCall, summarizeToolCall } from '../../common/summaries';
import type { Command, EventInput } from '../core/transitions';
import {
  checkWorkerOptions,
  describeFailure,
  localModelCallOptions,
  modelCallOptions,
  toolCallOptions,
  webhookOptions,
} from './activity-options';
import type { Patches } from './patches';

const activities = proxyActivities<KeelActivities>(modelCallOptions);
const localActivities = proxyLocalActivities<KeelActivities>(localModelCallOptions);

/** Since this patch a model call that streams no deltas runs as a local activity. */
export const localModelCallPatch = 'keel-model-call-local';

type Of<T extends Command['type']> = Extract<Command, { type: T }>;
type Feed = (event: EventInput) => void;

/** `turn`: the thread's run count as the operator reads it in the activity's summary. */
export async function callModel(
  { run_id, step, input }: Of<'callModel'>,
  turn: number,
  patches: Patches,
  feed: Feed,
): Promise<void> {
  const summary = summarizeModelCall(input.model, turn, step);
  const local = input.deltas === false && patches.folded(localModelCallPatch);
  // Waiting for the call to stop is what brings its text back: a streamed call since decision
  // 0370, a local one (a waited run's) since 0400; before that a local call stopped at once, with none.
  const stopping = (local ? patches.askEveryStopKeepsPartial() : patches.askStopKeepsPartial())
    ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED }
    : {};
  try {
    const result = local
      ? await localActivities.callModel.executeWithOptions(
          { ...localModelCallOptions, ...stopping, summary },
          [input],
        )
      : await activities.callModel.executeWithOptions({ ...modelCallOptions, ...stopping, summary }, [input]);
    feed({ type: 'modelResponded', run_id, step, result });
  } catch (error) {
    if (isCancellation(error)) {
      // The Stop that cancelled the call read the same answer: it waits for this event.
      if (!patches.stopsKeepPartial) throw error;
      // Fed outside the cancelled run's scope: the next run's calls, which this may start, are not
      // cancelled with it.
      const { text, streamed, billed } = stoppedCall(error);
      await CancellationScope.nonCancellable(() => {
        feed({
          type: 'modelStopped',
          run_id,
          step,
          text,
          ...(streamed === undefined ? {} : { streamed }),
          ...(billed === undefined ? {} : { billed }),
        });
        return Promise.resolve();
      });
      return;
    }
    const { type, message } = describeFailure(error);
    const billed = billedBy(error);
    feed({
      type: 'modelFailed',
      run_id,
      step,
      error: { type, message },
      ...(billed === undefined ? {} : { billed }),
    });
  }
}

/**
 * What a failed model call's attempts spent (decision 0425): its final failure's first detail
 * says so, or, when Temporal gave up on it by a timeout, its last heartbeat, whose reservation
 * counts as spent because that attempt never said what it was billed.
 */
function billedBy(error: unknown): Usage | undefined {
  for (let node: unknown = error; node instanceof Error; node = node.cause) {
    if (node instanceof ApplicationFailure) {
      const spent = spentByAttempts(node.details?.[0]);
      if (spent !== undefined) return spent;
    }
    if (node instanceof TimeoutFailure) return spentByAttempts(node.lastHeartbeatDetails);
  }
  return undefined;
}

/** What a stopped model call carried in its `CancelledFailure`'s details (no text if none). */
function stoppedCall(error: unknown): StoppedModelCall {
  for (let node: unknown = error; node instanceof Error; node = node.cause) {
    if (!(node instanceof CancelledFailure)) continue;
    const detail = node.details[0] as Partial<StoppedModelCall> | undefined;
    const attempt = detail?.streamed?.attempt;
    const billed = spentByAttempts({ billed: detail?.billed });
    return {
      text: typeof detail?.text === 'string' ? detail.text : '',
      ...(typeof attempt === 'number' ? { streamed: { attempt } } : {}),
      ...(billed === undefined ? {} : { billed }),
    };
  }
  return { text: '' };
}

export async function runTool(
  { use, flags, run_id, input }: Of<'runTool'>,
  patches: Patches,
  feed: Feed,
): Promise<void> {
  const options = { ...toolCallOptions(flags), summary: summarizeToolCall(use) };
  let finished: EventInput;
  try {
    const stored = await activities.runTool.executeWithOptions(options, [input]);
    // A result stored too large to read back decodes to a placeholder, not an error that would fail
    // every workflow task after it and leave the thread answering 503 for ever (decision 0321).
    const outcome = droppedResultOf(stored) ?? stored;
    finished = { type: 'toolFinished', run_id, tool_use_id: use.id, outcome };
  } catch (error) {
    if (isCancellation(error)) throw error;
    const { message, timeout, heartbeat } = describeFailure(error);
    // Only a side-effecting call says it was interrupted: a read-only one was retried, and failed.
    const worker =
      timeout === 'HEARTBEAT' && flags.sideEffects ? await workerOf(heartbeat, patches) : undefined;
    finished = {
      type: 'toolFailed',
      run_id,
      tool_use_id: use.id,
      failure: { message, timeout, ...(worker === undefined ? {} : { worker }) },
    };
  }
  feed(finished);
}

/**
 * Whether the worker a timed-out tool call's last heartbeat named still runs (decision 0412):
 * Temporal's heartbeat timeout is the same whether the worker died or a Temporal service between
 * it and the server stopped. Undefined when the heartbeats named none or the check cannot tell.
 */
async function workerOf(heartbeat: unknown, patches: Patches): Promise<'running' | 'stopped' | undefined> {
  const identity = (heartbeat as Partial<ToolCallProgress> | undefined)?.worker;
  if (typeof identity !== 'string' || !patches.askWorkerCheck()) return undefined;
  try {
    const state = await activities.checkWorker.executeWithOptions(
      { ...checkWorkerOptions, summary: `does worker ${identity.split(' ')[0]} still run?` },
      [{ identity }],
    );
    return state === 'unknown' ? undefined : state;
  } catch (error) {
    if (isCancellation(error)) throw error;
    return undefined;
  }
}

/** A webhook feeds nothing back: one that cannot be delivered is logged, and the run is unaffected. */
export function sendWebhook(delivery: SendWebhookInput): Promise<void> {
  return activities.sendWebhook
    .executeWithOptions(
      {
        ...webhookOptions,
        summary:
          delivery.summary ?? `webhook ${'type' in delivery.payload ? delivery.payload.type : 'delivery'}`,
      },
      [delivery],
    )
    .catch((error: unknown) =>
      // An error object would be logged as `{"cause": {}}`; its reason is what helps.
      log.warn('webhook not delivered', {
        webhook_id: delivery.webhook_id,
        url: urlForLogs(delivery.url),
        error: innermostMessage(error),
      }),
    );
}
