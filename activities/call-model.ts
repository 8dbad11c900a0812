/**
 * `callModel`: one model call for one step. It tells the model about the worker's tools and
 * reports back, with the answer, the flags of each tool the answer asks for.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import type { CallModelInput, CallModelResult, StoppedModelCall } from '../common/activities';
import { FailureType } from '../common/failures';
import { parseModelSpec } from '../common/model-spec';
import { type ModelMessage, textOf, toolUsesOf } from '../common/transcript';
import { DeltaPublisher } from './delta-publisher';
import { LiveTextSink, type LiveTextHub } from './live-text';
import { failure } from './errors';
import { StepMessagesReader } from './model-messages';
import { withHeartbeats, type BeatOnRequest } from './heartbeat';
import { countModelFault, faultsSoFar, type ModelCallProgress } from './model-faults';
import { stoppedByWorkerShutdown } from './shutdown';
import type { ModelClients } from './model/clients';
import type { PriceTable } from './model/prices';
import type { ToolRegistry } from './tools/registry';

/** Output tokens a single model call may produce. */
const maxOutputTokens = 8_192;

export const defaultSystemPrompt =
  'You are Keel, a careful assistant that works inside a private workspace directory. ' +
  'Your tools read and change files there and run commands in it. Use a tool when it helps answer; ' +
  'say plainly what you did and what you found.';

export interface CallModelDependencies {
  clients: ModelClients;
  registry: ToolRegistry;
  prices: PriceTable;
  /** Reads (and keeps) the messages of long conversations. @default a reader of its own */
  messages?: StepMessagesReader;
  /**
   * Where streamed text waits for the API (the live channel, decision 0340); without it, text is
   * published into the workflow's log (`KEEL_TOKEN_CHANNEL=history`). @default the history channel
   */
  live?: LiveTextHub | undefined;
}

/** Where this call's streamed text goes: the worker's live text, or the workflow's log. */
function textSinkFor(input: CallModelInput, live: LiveTextHub | undefined) {
  if (input.deltas === false) return undefined;
  const info = Context.current().info;
  const execution = info.workflowExecution;
  if (live !== undefined && execution !== undefined && !info.isLocal)
    return new LiveTextSink(live, {
      workflow_id: execution.workflowId,
      run_id: input.run_id,
      step: input.step,
      attempt: info.attempt,
    });
  return DeltaPublisher.forCurrentActivity({ run_id: input.run_id, step: input.step });
}

/**
 * On the live channel a model call beats slowly and at once when the API asks (decision 0420):
 * the API that takes a Stop reaches this worker, so the Stop need not wait for a one-second beat.
 */
function beatOnRequest(live: LiveTextHub | undefined): BeatOnRequest | undefined {
  const info = Context.current().info;
  const execution = info.workflowExecution;
  if (live === undefined || execution === undefined || info.isLocal) return undefined;
  return { requests: live.beats, workflowId: execution.workflowId };
}

/** The messages of a call whose input left them out: read from the workflow that asked for it. */
function messagesFromWorkflow(reader: StepMessagesReader, input: CallModelInput): Promise<ModelMessage[]> {
  const context = Context.current();
  const execution = context.info.workflowExecution;
  if (execution === undefined)
    throw failure(FailureType.modelRequestInvalid, 'no messages and no workflow to read them from', {
      nonRetryable: true,
    });
  return reader.read(context.client, execution, input);
}

export function createCallModel({
  clients,
  registry,
  prices,
  messages: reader = new StepMessagesReader(),
  live,
}: CallModelDependencies) {
  return async function callModel(input: CallModelInput): Promise<CallModelResult> {
    const spec = parseModelSpec(input.model);
    if (typeof spec === 'string') throw failure('ModelNotConfigured', spec, { nonRetryable: true });
    const client = clients(spec);
    const faults = faultsSoFar();
    return withHeartbeats(
      async (signal) => {
        // Not a fault of the model: the workflow's worker may be gone, and the next attempt asks again.
        const messages = input.messages ?? (await messagesFromWorkflow(reader, input));
        const deltas = textSinkFor(input, live);
        // What has streamed so far: a stopped call hands it back (as text only) for the transcript.
        let received = '';
        const onTextDelta = (text: string): void => {
          received += text;
          deltas?.push(text);
        };
        let reply;
        try {
          reply = await client.complete({
            model: spec.model,
            system: input.system ?? defaultSystemPrompt,
            messages,
            tools: registry.schemas(),
            maxTokens: maxOutputTokens,
            signal,
            // A call that publishes nothing still streams: its first token is timed all the same.
            ...(deltas !== undefined || input.deltas === false ? { onTextDelta } : {}),
          });
        } catch (error) {
          // A failed attempt's partial text is published for what it is: the retry's deltas replace it.
          await deltas?.close();
          // A worker shutting down is not the model's fault (withHeartbeats turns it into WorkerShutdown).
          if (stoppedByWorkerShutdown()) throw error;
          // Nor is a cancelled call: it ends as cancelled (a local activity would otherwise retry),
          // carrying what the model said until then (decision 0370).
          if (Context.current().cancellationSignal.aborted) {
            const stopped: StoppedModelCall = {
              text: received,
              ...(deltas instanceof LiveTextSink
                ? { streamed: { attempt: Context.current().info.attempt } }
                : {}),
            };
            throw new CancelledFailure(
              'model call stopped',
              [stopped],
              error instanceof Error ? error : undefined,
            );
          }
          throw countModelFault(error, faults);
        }
        const streamed = await deltas?.finish(textOf(reply.content));
        return {
          content: reply.content,
          stop_reason: reply.stop_reason,
          model: reply.model,
          usage: { ...reply.usage, cost_usd: prices.cost(input.model, reply.usage) },
          tools: registry.flagsFor(toolUsesOf(reply.content).map((use) => use.name)),
          ...streamed,
        };
      },
      { model_faults: faults } satisfies ModelCallProgress,
      beatOnRequest(live),
    );
  };
}
