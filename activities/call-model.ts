/**
 * `callModel`: one model call for one step. It tells the model about the worker's tools and
 * reports back, with the answer, the flags of each tool the answer asks for.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import type { CallModelInput, CallModelResult, StoppedModelCall } from '../common/activities';
import { FailureType } from '../common/failures';
import { parseModelSpec } from '../common/model-spec';
import { type ModelMessage, textOf, toolUsesOf } from '../common/transcript';
import { addUsage, totalTokens, type Usage } from '../common/usage';
import { DeltaPublisher } from './delta-publisher';
import { LiveTextSink, type LiveTextHub } from './live-text';
import { failure } from './errors';
import { StepMessagesReader } from './model-messages';
import { withHeartbeats, type BeatOnRequest } from './heartbeat';
import { budgetRefusal, fitCall } from './model-budget';
import { countModelFault, faultsSoFar, spentSoFar, type ModelCallProgress } from './model-faults';
import { stoppedByWorkerShutdown } from './shutdown';
import type { CountRequest } from './model/client';
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
 * A provider that cannot count before the call: its input estimated from the request's JSON, at
 * two characters a token, well above what tokenizers make of English or code (decision 0425).
 */
function estimateInputTokens(request: CountRequest): number {
  return Math.ceil((request.system.length + JSON.stringify([request.tools, request.messages]).length) / 2);
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
    const spent = spentSoFar();
    // Mutated as the attempt goes: every heartbeat carries what it may spend, since an attempt whose
    // worker dies never says what it was billed, and the next one counts that as spent (decision 0425).
    const progress: ModelCallProgress = {
      model_faults: faults,
      ...(totalTokens(spent) > 0 || spent.cost_usd > 0 ? { billed: spent } : {}),
    };
    return withHeartbeats(
      async (signal) => {
        // Not a fault of the model: the workflow's worker may be gone, and the next attempt asks again.
        const messages = input.messages ?? (await messagesFromWorkflow(reader, input));
        const system = input.system ?? defaultSystemPrompt;
        const tools = registry.schemas({ memory: input.memory });
        let maxTokens = maxOutputTokens;
        let reserved: Usage | undefined;
        let answerStarted = client.reportsAnswerStart !== true;
        try {
          if (input.budget !== undefined) {
            const request = { model: spec.model, system, messages, tools, signal };
            const inputTokens = await (client.countInputTokens?.(request) ?? estimateInputTokens(request));
            const fit = fitCall({
              budget: input.budget,
              spent,
              inputTokens,
              price: prices.priceOf(input.model),
              maxOutputTokens,
            });
            if (typeof fit === 'string') throw budgetRefusal(fit, spent);
            ({ maxTokens, reserved } = fit);
            progress.reserved = reserved;
            // At once, before the request: a worker killed mid-call leaves this for the next attempt.
            if (!Context.current().info.isLocal) Context.current().heartbeat(progress);
          }
        } catch (error) {
          if (stoppedByWorkerShutdown() || Context.current().cancellationSignal.aborted) throw error;
          throw countModelFault(error, faults, progress);
        }
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
            system,
            messages,
            tools,
            maxTokens,
            signal,
            onAnswerStarted: () => {
              answerStarted = true;
            },
            // A call that publishes nothing still streams: its first token is timed all the same.
            ...(deltas !== undefined || input.deltas === false ? { onTextDelta } : {}),
          });
        } catch (error) {
          // An attempt whose answer had begun is billed, by how much is not known: its reservation.
          if (reserved !== undefined) {
            const billed = answerStarted ? addUsage(spent, reserved) : spent;
            delete progress.reserved;
            if (totalTokens(billed) > 0 || billed.cost_usd > 0) progress.billed = billed;
          }
          // A failed attempt's partial text is published for what it is: the retry's deltas replace it.
          await deltas?.close();
          // A worker shutting down is not the model's fault (withHeartbeats turns it into WorkerShutdown).
          if (stoppedByWorkerShutdown()) {
            if (!Context.current().info.isLocal) Context.current().heartbeat(progress);
            throw error;
          }
          // Nor is a cancelled call: it ends as cancelled (a local activity would otherwise retry),
          // carrying what the model said until then (decision 0370).
          if (Context.current().cancellationSignal.aborted) {
            const stopped: StoppedModelCall = {
              text: received,
              ...(progress.billed === undefined ? {} : { billed: progress.billed }),
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
          throw countModelFault(error, faults, progress);
        }
        const streamed = await deltas?.finish(textOf(reply.content));
        const usage = { ...reply.usage, cost_usd: prices.cost(input.model, reply.usage) };
        return {
          content: reply.content,
          stop_reason: reply.stop_reason,
          model: reply.model,
          // Earlier attempts' spend is this call's too: the ledger counts every billed attempt.
          usage: addUsage(spent, usage),
          tools: registry.flagsFor(
            toolUsesOf(reply.content).map((use) => use.name),
            { memory: input.memory },
          ),
          ...streamed,
        };
      },
      progress,
      beatOnRequest(live),
    );
  };
}
