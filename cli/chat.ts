/**
 * `keel chat [thread]`: talk to a thread. The answer is printed as it streams, token by
 * token; a spinner shows while the model thinks or a tool runs (on a terminal only), approvals
 * are asked with a `[y/N]` prompt and a countdown, and the running cost shows in the spinner and
 * after every run. Ctrl-C stops the run in progress; pressed again (or at the prompt) it leaves.
 *
 * Lines starting with `/` are the chat's own commands (`/help` lists them) and never reach the
 * model. Resuming a thread prints it so far; each tool call shows its command and the first lines
 * of its output; an answer the user stopped stays on screen, marked stopped. Colour only on a
 * terminal, and never with `NO_COLOR`.
 *
 * Piped (stdin or stdout not a terminal) the output is the conversation only: no prompts,
 * spinner, countdown or colour. An approval is answered by the next input line; once input has ended,
 * `--approve-all`/`--deny-all` answer it, and without either the chat cancels the run and fails.
 */
import type { Run } from '../common/run';
import type { Thread } from '../common/thread';
import { totalTokens } from '../common/usage';
import type { KeelApiClient } from './api-client';
import { ApiCallError } from '../common/api-call-errors';
import { budgetLine, endedLine, quotaLine, refusedLine } from './budget-lines';
import { historyLines } from './chat-history';
import { helpLines, parseChatLine, type ChatCommandName } from './chat-commands';
import { ChatInput } from './chat-input';
import { ChatScreen, type ChatOutput } from './chat-screen';
import { followRun, money, type Answer } from './chat-run';
import { StreamingRunFollower, type ApprovalRequest, type RunFollower } from './run-follower';
import { styleFor, type Style } from './style';
import { foldedOutput, toolCallLine } from './tool-lines';
import { KeelError } from '../common/errors';

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
  /** Colour for the output (cli/style.ts decides when). @default none */
  style?: Style;
}

/** Ends the chat with one line and a non-zero exit (an approval nobody can answer). */
export class ChatError extends KeelError {
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
    `${money(thread.summary.cost_usd)}${limits.length === 0 ? '' : ` of ${limits.join(' / ')}`}` +
    `${thread.budget === undefined ? '' : ` · ${budgetLine(thread.budget)}`}]`
  );
}

/** Opens (or creates) the thread the chat talks to, applying the flags; `resumed` when it existed. */
async function openThread(options: ChatOptions): Promise<{ thread: Thread; resumed: boolean }> {
  const { api } = options;
  const config = {
    ...(options.approval === undefined ? {} : { approval: options.approval }),
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    ...(options.maxCostUsd === undefined ? {} : { max_cost_usd: options.maxCostUsd }),
    ...(options.model === undefined ? {} : { model: options.model }),
  };
  if (options.threadId === undefined) return { thread: await api.createThread({ config }), resumed: false };
  try {
    const thread = await api.getThread(options.threadId);
    if (options.maxTokens !== undefined || options.maxCostUsd !== undefined) {
      const limited = await api.updateLimits(thread.thread_id, {
        ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
        ...(options.maxCostUsd === undefined ? {} : { max_cost_usd: options.maxCostUsd }),
      });
      return { thread: limited, resumed: true };
    }
    return { thread, resumed: true };
  } catch (error) {
    if (error instanceof ApiCallError && error.status === 404)
      return { thread: await api.createThread({ thread_id: options.threadId, config }), resumed: false };
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
  // As the tool line will show the call: `$ command` for bash, the path for a file tool.
  const call = toolCallLine(approval.tool, approval.input);
  // What a write would put in the file is part of what is asked: its first lines, folded.
  const content = approval.tool === 'write_file' ? approval.input.content : undefined;
  const showContent = () => {
    if (typeof content === 'string') for (const line of foldedOutput(content)) screen.line(`    │ ${line}`);
  };
  const secondsLeft = () => Math.ceil((Date.parse(approval.expires_at) - Date.now()) / 1000);
  if (preset !== undefined) {
    showContent();
    screen.line(`Allow ${call}? ${preset === 'approve' ? 'yes (--approve-all)' : 'no (--deny-all)'}`);
    return preset;
  }
  if (!screen.interactive && input.ended) throw noAnswer(call);
  showContent();
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
  const screen = new ChatScreen(output, source.isTTY === true, options.style ?? styleFor({}, {}));
  const { style } = screen;
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
    screen.aside(style.warn('  (stopping the run; Ctrl-C again leaves)'));
    void api
      .cancelRun(thread.thread_id, current.runId)
      .catch((error: unknown) => screen.line(`  ${messageOf(error)}`));
  };
  process.on('SIGINT', interrupt);
  const { thread, resumed } = await openThread(options).catch((error: unknown) => {
    process.off('SIGINT', interrupt);
    input.close();
    throw error;
  });
  screen.line(
    style.dim(
      `keel chat · thread ${thread.thread_id} · ${options.model ?? thread.config.model} · approval ${thread.config.approval}` +
        ` · /help for commands · /exit${screen.interactive ? ' or Ctrl-C' : ''} to leave`,
    ),
  );
  const printHistory = async () => {
    const messages = await api.messages(thread.thread_id);
    for (const line of historyLines(style, messages, thread.thread_id)) screen.line(line);
    return messages.length;
  };
  if (resumed) await printHistory();
  /** A local command: done here, never sent to the model. False for `/exit`. */
  const command = async (name: ChatCommandName, args: string[]): Promise<boolean> => {
    switch (name) {
      case 'exit':
        return false;
      case 'help':
        for (const line of helpLines()) screen.line(style.dim(line));
        return true;
      case 'history':
        if ((await printHistory()) === 0) screen.line(style.dim('  (nothing said yet)'));
        return true;
      case 'status': {
        const now = await api.getThread(thread.thread_id);
        const { summary } = now;
        screen.line(
          style.dim(
            `  ${now.status} · ${now.config.model} · approval ${now.config.approval} · ${summary.runs} runs · ` +
              `${summary.tokens} tokens ${money(summary.cost_usd)}`,
          ),
        );
        return true;
      }
      case 'approve':
      case 'deny': {
        const [id, ...reason] = args;
        const pending = (await api.approvals(thread.thread_id)).filter(
          (approval) => id === undefined || approval.approval_id === id,
        );
        if (pending.length === 0)
          screen.line(style.dim(`  no pending approval${id === undefined ? 's' : ` ${id}`}`));
        for (const approval of pending) {
          const why = reason.length === 0 ? undefined : reason.join(' ');
          await api.decide(thread.thread_id, approval.approval_id, name, why);
          screen.line(
            `  ${name === 'approve' ? 'approved' : 'denied'} ${approval.tool} (${approval.approval_id})`,
          );
        }
        return true;
      }
    }
  };
  try {
    for (;;) {
      screen.settle();
      const typed = await Promise.race([input.next(`${style.you('you ›')} `), leaving]);
      if (typed === left || typed === undefined) break;
      if (typed.trim() === '') continue;
      if (!screen.interactive) screen.line(`you › ${typed}`);
      const line = parseChatLine(typed);
      if (line.kind === 'unknown') {
        screen.line(
          style.warn(
            `  /${line.name} is not a command: /help lists them (//${line.name} sends it to the model)`,
          ),
        );
        continue;
      }
      if (line.kind === 'command') {
        try {
          if (!(await command(line.name, line.args))) break;
        } catch (error) {
          if (!(error instanceof ApiCallError)) throw error;
          screen.line(style.error(`  ✗ ${error.message}`));
        }
        continue;
      }
      const { text } = line;
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
        screen.line(style.error(`  ✗ ${refusedLine(error) ?? error.message}`));
        continue;
      } finally {
        current = undefined;
      }
      if (finished === left) break;
      const [after, quota] = await Promise.all([
        api.getThread(thread.thread_id),
        // An API of an earlier release has no quotas: the line is left out.
        api.getQuota().catch(() => undefined),
      ]);
      if (finished.status !== 'completed') screen.line(style.warn(endedLine(finished)));
      screen.line(style.dim(formatCost(finished, after)));
      // The owner's quota as the ledger has it now: a run that just ended may hold its share a moment longer.
      const owner = quota === undefined ? undefined : quotaLine(quota);
      if (owner !== undefined) screen.line(style.dim(`[quota ${owner}]`));
    }
  } finally {
    screen.settle();
    input.close();
    process.off('SIGINT', interrupt);
  }
}
