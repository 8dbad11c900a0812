/**
 * `keel chat [thread]`: talk to a thread. The answer is printed as it streams, token by
 * token; a spinner shows while the model thinks or a tool runs (on a terminal only), approvals
 * are asked with a `[y/N]` prompt and a countdown, and the running cost shows in the spinner and
 * after every run. Ctrl-C stops the run in progress; pressed again (or at the prompt) it leaves.
 *
 * Piped (stdin or stdout not a terminal) the output is the conversation only: no prompts,
 * spinner or countdown. An approval is answered by the next input line; once input has ended,
 * `--approve-all`/`--deny-all` answer it, and without either the chat cancels the run and fails.
 */
import type { Run } from '../common/run';
import type { Thread } from '../common/thread';
import { totalTokens } from '../common/usage';
import { ApiCallError, type KeelApiClient } from './api-client';
import { ChatInput } from './chat-input';
import { ChatScreen, type ChatOutput } from './chat-screen';
import { followRun, money, type Answer } from './chat-run';
import { StreamingRunFollower, type ApprovalRequest, type RunFollower } from './run-follower';

export interface ChatOptions {
  api: KeelApiClient;
  threadId?: string;
  approval?: 'auto' | 'require';
  /** Answers every approval without asking (`--approve-all`, `--deny-all`). */
  answerApprovals?: 'approve' | 'deny';
  maxTokens?: number;
  maxCostUsd?: number;
  model?: string;
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  output?: ChatOutput;
  follower?: RunFollower;
}

/** Ends the chat with one line and a non-zero exit (an approval nobody can answer). */
export class ChatError extends Error {
  override readonly name = 'ChatError';
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
export function formatCost(run: Run, thread: Thread): string {
  const limits = [
    ...(thread.config.max_tokens === undefined ? [] : [`${thread.config.max_tokens} tokens`]),
    ...(thread.config.max_cost_usd === undefined ? [] : [`$${thread.config.max_cost_usd}`]),
  ];
  return (
    `[run ${totalTokens(run.usage)} tokens ${money(run.usage.cost_usd)} · thread ${thread.summary.tokens} tokens ` +
    `${money(thread.summary.cost_usd)}${limits.length === 0 ? '' : ` of ${limits.join(' / ')}`}]`
  );
}

/** Opens (or creates) the thread the chat talks to, applying the flags. */
async function openThread(options: ChatOptions): Promise<Thread> {
  const { api } = options;
  const config = {
    ...(options.approval === undefined ? {} : { approval: options.approval }),
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    ...(options.maxCostUsd === undefined ? {} : { max_cost_usd: options.maxCostUsd }),
    ...(options.model === undefined ? {} : { model: options.model }),
  };
  if (options.threadId === undefined) return api.createThread({ config });
  try {
    const thread = await api.getThread(options.threadId);
    if (options.maxTokens !== undefined || options.maxCostUsd !== undefined) {
      return await api.updateLimits(thread.thread_id, {
        ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
        ...(options.maxCostUsd === undefined ? {} : { max_cost_usd: options.maxCostUsd }),
      });
    }
    return thread;
  } catch (error) {
    if (error instanceof ApiCallError && error.status === 404)
      return api.createThread({ thread_id: options.threadId, config });
    throw error;
  }
}

/**
 * Asks `[y/N]` (with a countdown on a terminal) until the approval expires. Piped, the next
 * input line answers; with no input left the flag answers, or the chat fails.
 */
async function askApproval(
  input: ChatInput,
  screen: ChatScreen,
  approval: ApprovalRequest,
  preset: 'approve' | 'deny' | undefined,
): Promise<Answer> {
  const detail = JSON.stringify(approval.input);
  const call = `${approval.tool} ${detail.length > 200 ? `${detail.slice(0, 199)}…` : detail}`;
  const secondsLeft = () => Math.ceil((Date.parse(approval.expires_at) - Date.now()) / 1000);
  if (preset !== undefined) {
    screen.line(`Allow ${call}? ${preset === 'approve' ? 'yes (--approve-all)' : 'no (--deny-all)'}`);
    return preset;
  }
  if (!screen.interactive && input.ended) throw noAnswer(call);
  const question = () =>
    `Allow ${call}? [y/N]${screen.interactive ? ` (${Math.max(0, secondsLeft())}s)` : ''} `;
  let expired = false;
  const ticker = setInterval(() => {
    if (secondsLeft() > 0) return input.refreshPrompt(question());
    expired = true;
    input.cancelWait();
  }, 1000);
  try {
    const answer = await input.next(question());
    if (expired) {
      screen.line('  (no answer in time)');
      return 'expired';
    }
    if (answer === undefined) {
      if (!screen.interactive && input.ended) throw noAnswer(call);
      return 'interrupted';
    }
    if (!screen.interactive) screen.line(`${question()}${answer}`);
    return /^y(es)?$/i.test(answer.trim()) ? 'approve' : 'deny';
  } finally {
    clearInterval(ticker);
  }
}

function noAnswer(call: string): ChatError {
  return new ChatError(
    `the run asks to allow ${call}, but the input has ended; ` +
      'pass --approve-all or --deny-all to answer approvals when input is piped (the run was cancelled)',
  );
}

const left = Symbol('left');

export async function chat(options: ChatOptions): Promise<void> {
  const output = options.output ?? process.stdout;
  const source = options.input ?? process.stdin;
  const { api } = options;
  const follower = options.follower ?? new StreamingRunFollower(api);
  const screen = new ChatScreen(output, source.isTTY === true);
  let current: { runId: string; stopping: boolean } | undefined;
  let leave = (): void => undefined;
  const leaving = new Promise<typeof left>((resolve) => (leave = () => resolve(left)));
  const input = new ChatInput({
    input: source,
    output,
    interactive: screen.interactive,
    onInterrupt: () => interrupt(),
  });
  // First Ctrl-C stops the run in progress (and any question it asked); the next one leaves.
  const interrupt = (): void => {
    if (current === undefined || current.stopping) {
      input.cancelWait();
      leave();
      return;
    }
    current.stopping = true;
    input.cancelWait();
    screen.line('  (stopping the run; Ctrl-C again leaves)');
    void api
      .cancelRun(thread.thread_id, current.runId)
      .catch((error: unknown) => screen.line(`  ${messageOf(error)}`));
  };
  process.on('SIGINT', interrupt);
  const thread = await openThread(options).catch((error: unknown) => {
    process.off('SIGINT', interrupt);
    input.close();
    throw error;
  });
  screen.line(
    `keel chat · thread ${thread.thread_id} · ${options.model ?? thread.config.model} · approval ${thread.config.approval}` +
      ` · /exit${screen.interactive ? ' or Ctrl-C' : ''} to leave`,
  );
  try {
    for (;;) {
      screen.settle();
      const text = await Promise.race([input.next('you › '), leaving]);
      if (text === left || text === undefined || text.trim() === '/exit') break;
      if (text.trim() === '') continue;
      if (!screen.interactive) screen.line(`you › ${text}`);
      let finished: Run | typeof left;
      try {
        const run = await api.createRun(thread.thread_id, text, options.model);
        current = { runId: run.run_id, stopping: false };
        const following = followRun(follower, thread.thread_id, run.run_id, {
          screen,
          ask: (approval) => askApproval(input, screen, approval, options.answerApprovals),
          decide: (approvalId, decision) => api.decide(thread.thread_id, approvalId, decision),
          cancel: () => api.cancelRun(thread.thread_id, run.run_id),
        });
        // Leaving abandons the follow: whatever it ends with later is nobody's concern.
        following.catch(() => undefined);
        finished = await Promise.race([following, leaving]);
      } catch (error) {
        if (!(error instanceof ApiCallError)) throw error;
        screen.line(`  ✗ ${error.message}`);
        continue;
      } finally {
        current = undefined;
      }
      if (finished === left) break;
      const after = await api.getThread(thread.thread_id);
      if (finished.status !== 'completed')
        screen.line(
          `(run ${finished.status}${finished.status_reason === undefined ? '' : `: ${finished.status_reason}`})`,
        );
      screen.line(formatCost(finished, after));
    }
  } finally {
    screen.settle();
    input.close();
    process.off('SIGINT', interrupt);
  }
}
