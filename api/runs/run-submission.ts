/**
 * What a create-run body does: a new turn (input), or the answer to the thread's interrupts
 * (`command.resume`), which continues the run that waits on them (decisions 0094 and 0095).
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Response } from 'express';
import type { SubmitInput } from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import { isCheckpoint } from '../../common/branch-tree';
import { checkInput } from '../../common/input-rules';
import type { Conversations } from '../conversations';
import type { ThreadGateway } from '../gateway/thread-gateway';
import type { ThreadService } from '../threads/thread-service';
import type { RunService } from './run-service';
import type { Submitted } from '../gateway/run-intake';
import { ApiError } from '../errors';
import type { OwnerQuotas } from '../quotas/owner-quotas';
import { waitForRun } from './run-waiter';
import { inputContent, type CreateRunBody } from '../schemas';
import type { ThreadDirectory } from '../threads/thread-directory';
import type { ThreadRef } from '../threads/thread-ref';
import { ownerOf } from '../validate';
import { runMetadataOf, type Assistants } from '../assistants/assistant-service';
import { initialCheckpointId } from '../protocol/checkpoints';
import { decisionsFor } from '../protocol/interrupts';
import { checkpointIdOf, type ProtocolRunBody } from './run-schemas';

/**
 * A wait at least this long makes a run's model calls local activities; a shorter one is expected
 * to give up before the run ends, and the run then behaves as a background run does.
 */
export const localCallsFromWaitMs = 60_000;

/** What submitting a run needs. */
export interface RunServices {
  /** The thread and run services joined, for A2A and MCP until they take the services. */
  conversations: Conversations;
  threads: ThreadService;
  runs: RunService;
  gateway: ThreadGateway;
  quotas: OwnerQuotas;
  assistants: Assistants;
  threadDirectory: ThreadDirectory;
}

/**
 * The run id an `Idempotency-Key` stands for: a client that retries with the same key (and no
 * `run_id`) reaches the same run, never a second one. Derived, so no table is kept anywhere.
 */
export function idempotentRunId(key: string | undefined): string | undefined {
  if (key === undefined || key.trim() === '') return undefined;
  return `idem-${createHash('sha256').update(key.trim()).digest('hex').slice(0, 32)}`;
}

export interface StartedRun extends Submitted {
  /**
   * The workflow that holds the run's thread: ids are per owner, so the thread id alone does not
   * name it (decision 0160).
   */
  thread: ThreadRef;
  /** For a resumed run: the stream offset before the answers, where its stream goes on from. */
  resumedFrom?: number;
}

export interface StartRunOptions {
  /** The caller will wait for the run's end (`runs/wait`), which the submission then answers. */
  wait?: boolean;
  /** When the waiting caller gives up (epoch ms). */
  deadline?: number;
  /** The stream modes of a streamed run, kept on it for a join that names none (as LangGraph does). */
  streamMode?: readonly string[];
}

/**
 * Starts a turn, or resumes the run waiting on the thread's interrupts. `wait`: the caller will
 * wait for the run's end (`runs/wait`), which the submission itself then answers (`settled`).
 */
export async function startRun(
  services: RunServices,
  threadId: string,
  body: ProtocolRunBody,
  response: Response,
  { wait = false, deadline, streamMode }: StartRunOptions = {},
): Promise<StartedRun> {
  if (body.command !== undefined && body.command !== null)
    return resumeRun(services, threadId, body.command.resume, response);
  return submitRun(services, threadId, body, response, {
    wait,
    ...(deadline === undefined ? {} : { deadline }),
    ...(streamMode === undefined ? {} : { streamMode }),
  });
}

async function resumeRun(
  { threads, runs, gateway }: RunServices,
  threadId: string,
  resume: unknown,
  response: Response,
): Promise<StartedRun> {
  const thread = await threads.authorize(threadId, ownerOf(response));
  const pending = await threads.pendingApprovals(thread);
  const decisions = decisionsFor(resume, pending, threadId);
  const resumedFrom = await gateway.currentOffset(thread);
  for (const decision of decisions) await runs.decideApproval(thread, decision);
  return { run: await runs.getRun(thread, pending[0]!.run_id), thread, resumedFrom };
}

/** Submits a run from a create-run body (creating the thread first with `if_not_exists: "create"`). */
async function submitRun(
  { threads, runs, assistants, quotas }: RunServices,
  threadId: string,
  body: ProtocolRunBody,
  response: Response,
  options: { wait: boolean; deadline?: number; streamMode?: readonly string[] },
): Promise<StartedRun> {
  const { wait } = options;
  const owner = ownerOf(response);
  const settings = await assistants.settingsFor(body.assistant_id, owner);
  if (body.webhook !== undefined) await runs.checkWebhook(body.webhook);
  // A run through an assistant of one's own carries its configuration (the deployment's defaults
  // fill what it leaves out); the default assistant runs the thread as it is configured.
  const config =
    settings === undefined
      ? undefined
      : threads.threadConfig({
          ...settings,
          ...(body.config.model === undefined ? {} : { model: body.config.model }),
        });
  const create =
    body.if_not_exists === 'create'
      ? threads.newConversation(threadId, owner, runMetadataOf(body.assistant_id), settings ?? {})
      : undefined;
  let checkpointId: string | undefined;
  let thread: ThreadRef;
  // A thread that took this caller's input through this API a moment ago is not described again:
  // the input's own update finds one that ended since, and it is then authorized (decision 0302).
  const known = create === undefined ? threads.knownThread(threadId, owner) : undefined;
  if (create === undefined) {
    thread = known ?? (await threads.authorize(threadId, owner));
    checkpointId = await forkPoint(threads, thread, checkpointIdOf(body));
  } else thread = await threads.resolveForCreate(threadId, owner);
  const input: SubmitInput = {
    run_id: body.run_id ?? idempotentRunId(response.req.header('idempotency-key')) ?? randomUUID(),
    assistant_id: body.assistant_id,
    content: inputContent({ input: body.input ?? { messages: [] } } as CreateRunBody),
    // Rollback cancels the run under way as interrupt does; Keel keeps what it committed.
    multitask_strategy: body.multitask_strategy === 'rollback' ? 'interrupt' : body.multitask_strategy,
    metadata: body.metadata,
    ...(body.config.model === undefined ? {} : { model: body.config.model }),
    ...(config === undefined ? {} : { config, model: config.model }),
    ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
    ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }),
    ...(options.streamMode === undefined ? {} : { stream_mode: options.streamMode }),
    // A caller that waits for the whole answer is not streamed its text token by token, so its
    // model calls may be local activities (decision 0200). One that may well give up first (a
    // short timeout) comes back to a run that streams, and is marked deferred, as any other.
    ...(wait && runs.localModelCalls && (options.deadline ?? Infinity) - Date.now() >= localCallsFromWaitMs
      ? { deltas: false as const }
      : {}),
  };
  // Every rule that needs no thread state is checked here, before anything is sent: an input
  // that may go by signal must not be one the thread would only refuse.
  const invalid = checkInput(input);
  if (invalid !== undefined) throw new ApiError(422, 'invalid_input', invalid.message, 'input.messages');
  const submitted = await admitted(quotas, thread, input, (claimed) =>
    runs.submitRun(thread, claimed, create, options),
  ).catch(async (error) => {
    if (known === undefined || !(error instanceof WorkflowNotFoundError)) throw error;
    thread = await threads.authorize(threadId, owner);
    return admitted(quotas, thread, input, (claimed) => runs.submitRun(thread, claimed, create, options));
  });
  // As LangGraph does, the thread records the assistant its latest run went through (a thread
  // created bare, or by another assistant). Cosmetic: a thread that cannot answer now keeps its own.
  if (create === undefined && settings !== undefined)
    await threads.recordAssistant(thread, runMetadataOf(body.assistant_id)).catch(() => undefined);
  return { ...submitted, thread };
}

/**
 * Submits the input admitted against its owner's quota (decision 0440): refused with 429 before
 * it reaches the thread, or carrying its share. A thread that refuses the input itself (busy,
 * closed, invalid) never makes the run, so its slot is freed at once.
 */
async function admitted<T>(
  quotas: OwnerQuotas,
  thread: ThreadRef,
  input: SubmitInput,
  submit: (claimed: SubmitInput) => Promise<T>,
): Promise<T> {
  const quota = await quotas.admit(thread, input.run_id);
  if (quota === undefined) return submit(input);
  try {
    return await submit({ ...input, quota });
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError)
      await quotas.release(thread, input.run_id).catch(() => undefined);
    throw error;
  }
}

/**
 * The checkpoint a run forks from: undefined for none, or for the thread's newest (`useStream`
 * names it on every submit), which runs as any run does; 404 for one the thread does not hold.
 */
async function forkPoint(
  threads: ThreadService,
  thread: ThreadRef,
  checkpointId: string | undefined,
): Promise<string | undefined> {
  if (checkpointId === undefined) return undefined;
  const [transcript, tree] = await Promise.all([threads.transcript(thread), threads.branches(thread)]);
  const newest = transcript.at(-1)?.id ?? initialCheckpointId;
  if (checkpointId === newest) return undefined;
  if (!isCheckpoint(transcript, tree.branches, tree.compacted_messages, checkpointId))
    throw new ApiError(404, 'checkpoint_not_found', `checkpoint ${checkpointId} not found`, 'checkpoint_id');
  return checkpointId;
}

/** How often a wait asks whether its run now waits on a human (a query: nothing is written). */
const interruptCheckMs = 1_000;

const isSettled = (current: Run | undefined): boolean =>
  current !== undefined && (isTerminal(current.status) || current.status_reason === 'awaiting_approval');

/**
 * Waits until the run is over or waits on a human (an interrupt), at most `timeoutMs`; undefined
 * when neither happened in time or the caller went away. A submission that waits (`settled`)
 * answers both itself; otherwise, or when it answered early (the thread handed over to
 * continue-as-new, or its worker is of an earlier release), the end is awaited by one `awaitRun`
 * update, and the interrupt, which does not end the run, is watched for by query beside it.
 */
export async function waitForRunOrInterrupt(
  conversations: Pick<Conversations, 'client' | 'peekInterruptedRun'>,
  thread: ThreadRef,
  { run, settled }: Submitted,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Run | undefined> {
  if (isSettled(run)) return run;
  // Already given up (the API began to stop while this request was still being taken in): an
  // abort listener added now would never fire.
  if (signal.aborted) return undefined;
  const deadline = Date.now() + timeoutMs;
  const stop = new AbortController();
  const onGone = (): void => stop.abort();
  signal.addEventListener('abort', onGone, { once: true });
  const timer = setTimeout(onGone, timeoutMs);
  try {
    if (settled !== undefined) {
      const gaveUp = new Promise<undefined>((resolve) =>
        stop.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
      );
      const answer = settled(stop.signal).catch(() => undefined);
      const current = await Promise.race([answer, gaveUp]);
      if (stop.signal.aborted) return undefined;
      if (current !== undefined && isSettled(current)) return current;
    }
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    const ended = waitForRun(conversations.client, thread, run.run_id, left, stop.signal);
    const interrupted = (async (): Promise<Run | undefined> => {
      while (!stop.signal.aborted) {
        await sleep(interruptCheckMs, undefined, { signal: stop.signal }).catch(() => undefined);
        if (stop.signal.aborted) return undefined;
        // One ask per check: a stalled one is asked again at the next check anyway. The thread's
        // description says whether it waits on a human; only then is the run queried (0303).
        const current = await conversations.peekInterruptedRun(thread, run.run_id, interruptCheckMs);
        if (isSettled(current)) return current;
      }
      return undefined;
    })();
    return await Promise.race([ended, interrupted.then((current) => current ?? ended)]);
  } finally {
    clearTimeout(timer);
    stop.abort();
    signal.removeEventListener('abort', onGone);
  }
}
