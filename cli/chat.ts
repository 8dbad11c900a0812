/**
 * `keel chat [thread]`: an interactive session. The answer is printed as it streams, token by
 * token; a spinner shows while the model thinks or a tool runs (on a terminal only), approvals
 * are asked with a `[y/N]` prompt and a countdown, and the running cost shows in the spinner and
 * after every run.
 */
import { createInterface, type Interface } from 'node:readline';
import ora, { type Ora } from 'ora';
import type { Run } from '../common/run';
import type { Thread } from '../common/thread';
import { totalTokens } from '../common/usage';
import { ApiCallError, type KeelApiClient } from './api-client';
import { StreamingRunFollower, type ApprovalRequest, type RunFollower } from './run-follower';

export interface ChatOptions {
  api: KeelApiClient;
  threadId?: string;
  approval?: 'auto' | 'require';
  maxTokens?: number;
  maxCostUsd?: number;
  model?: string;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream & { isTTY?: boolean };
  follower?: RunFollower;
}

const money = (usd: number) => `$${usd.toFixed(4)}`;

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

/** Asks `[y/N]` with a countdown to the approval's expiry; no answer in time counts as no decision. */
function askApproval(
  readline: Interface,
  output: NodeJS.WritableStream,
  approval: ApprovalRequest,
): Promise<'approve' | 'deny' | 'expired'> {
  const detail = JSON.stringify(approval.input);
  const question = () => {
    const left = Math.max(0, Math.ceil((Date.parse(approval.expires_at) - Date.now()) / 1000));
    return `Allow ${approval.tool} ${detail.length > 200 ? `${detail.slice(0, 199)}…` : detail}? [y/N] (${left}s) `;
  };
  return new Promise((resolve) => {
    readline.setPrompt(question());
    readline.prompt();
    const ticker = setInterval(() => {
      if (Date.parse(approval.expires_at) <= Date.now()) return finish('expired');
      output.write('\r\u001b[2K');
      readline.setPrompt(question());
      readline.prompt(true);
    }, 1000);
    const onLine = (answer: string) => finish(/^y(es)?$/i.test(answer.trim()) ? 'approve' : 'deny');
    const finish = (result: 'approve' | 'deny' | 'expired') => {
      clearInterval(ticker);
      readline.off('line', onLine);
      if (result === 'expired') output.write('\n(no answer in time)\n');
      resolve(result);
    };
    readline.once('line', onLine);
  });
}

export async function chat(options: ChatOptions): Promise<void> {
  const output = options.output ?? process.stdout;
  const input = options.input ?? process.stdin;
  const { api } = options;
  const follower = options.follower ?? new StreamingRunFollower(api);
  const thread = await openThread(options);
  const write = (text: string) => output.write(`${text}\n`);
  write(
    `keel chat · thread ${thread.thread_id} · ${options.model ?? thread.config.model} · approval ${thread.config.approval}` +
      ' · /exit to leave',
  );
  const readline = createInterface({ input, output, terminal: output.isTTY === true });
  const lines: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let closed = false;
  const nextLine = (): Promise<string | undefined> => {
    if (lines.length > 0) return Promise.resolve(lines.shift());
    if (closed) return Promise.resolve(undefined);
    return new Promise((resolve) => (waiting = resolve));
  };
  const onLine = (line: string) => {
    if (waiting !== undefined) {
      const resolve = waiting;
      waiting = undefined;
      resolve(line);
    } else lines.push(line);
  };
  readline.on('close', () => {
    closed = true;
    waiting?.(undefined);
  });
  // A terminal that reports 0 columns (a fresh pty) makes ora's line counting loop; print plainly
  // there. Off a terminal the spinner is silent: piped output holds the conversation only.
  const columns = (output as { columns?: number }).columns ?? 0;
  const spinning = output.isTTY === true && columns > 0;
  const spinner = ora({ stream: output, discardStdin: false, isEnabled: spinning, isSilent: !spinning });
  try {
    for (;;) {
      readline.setPrompt('you › ');
      readline.prompt();
      readline.on('line', onLine);
      const text = await nextLine();
      readline.off('line', onLine);
      if (text === undefined || text.trim() === '/exit') break;
      if (text.trim() === '') continue;
      const run = await api.createRun(thread.thread_id, text, options.model);
      const finished = await followRun(follower, thread.thread_id, run.run_id, {
        write,
        output,
        spinner,
        ask: (approval) => askApproval(readline, output, approval),
        decide: (approvalId, decision) => api.decide(thread.thread_id, approvalId, decision),
      });
      const after = await api.getThread(thread.thread_id);
      if (finished.status !== 'completed')
        write(
          `(run ${finished.status}${finished.status_reason === undefined ? '' : `: ${finished.status_reason}`})`,
        );
      write(formatCost(finished, after));
    }
  } finally {
    spinner.stop();
    readline.close();
  }
}

interface RunScreen {
  write: (line: string) => void;
  output: NodeJS.WritableStream;
  spinner: Ora;
  ask: (approval: ApprovalRequest) => Promise<'approve' | 'deny' | 'expired'>;
  decide: (approvalId: string, decision: 'approve' | 'deny') => Promise<unknown>;
}

/**
 * Shows one run as it happens: streamed text on a `keel › ` line, a line per tool, the approval
 * prompt, notes; the spinner only ever runs at the start of an empty line.
 */
async function followRun(
  follower: RunFollower,
  threadId: string,
  runId: string,
  screen: RunScreen,
): Promise<Run> {
  const { write, output, spinner } = screen;
  let lineOpen = false;
  let cost = '';
  let activity = 'thinking…';
  const endLine = () => {
    if (lineOpen) output.write('\n');
    lineOpen = false;
  };
  const busy = (what: string) => {
    activity = what;
    spinner.text = `${activity}${cost}`;
    if (!lineOpen) spinner.start();
  };
  const say = (line: string) => {
    spinner.stop();
    endLine();
    write(line);
  };
  const started = new Set<string>();
  busy('thinking…');
  try {
    return await follower.follow(threadId, runId, {
      onProgress(current) {
        if (current.status === 'deferred') busy('waiting for the thread…');
      },
      onDelta(text) {
        spinner.stop();
        if (!lineOpen) output.write('keel › ');
        lineOpen = true;
        output.write(text);
      },
      onRetry(attempt) {
        say(`  ↻ the model call failed midway and was retried (attempt ${attempt}); its answer starts over:`);
      },
      onMessage(message, streamed) {
        spinner.stop();
        endLine();
        for (const block of message.content) {
          if (block.type === 'text' && !streamed) write(`keel › ${block.text}`);
          // Tools that ran were shown as they started; the rest never ran (denied, unknown, timed out).
          if (block.type === 'tool_use' && !started.has(block.id))
            write(`  ⚙ ${block.name} ${JSON.stringify(block.input)} (not run)`);
        }
        busy('thinking…');
      },
      onToolStarted(tool) {
        started.add(tool.tool_use_id);
        say(`  ⚙ ${tool.name} ${JSON.stringify(tool.input)}`);
        busy(`running ${tool.name}…`);
      },
      onToolCompleted(tool) {
        if (tool.is_error) say(`  ✗ ${tool.name} failed`);
        busy('thinking…');
      },
      onUsage(usage) {
        cost = ` ${money(usage.cost_usd)}`;
        spinner.text = `${activity}${cost}`;
      },
      async onApproval(approval) {
        spinner.stop();
        endLine();
        const answer = await screen.ask(approval);
        if (answer !== 'expired') {
          try {
            await screen.decide(approval.approval_id, answer);
            write(answer === 'approve' ? '  approved' : '  denied');
          } catch (error) {
            write(`  ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        busy('thinking…');
      },
      onNotice(text) {
        say(`  (${text})`);
        busy(activity);
      },
      onReconnecting() {
        if (spinner.isSpinning) spinner.text = `reconnecting…${cost}`;
      },
    });
  } finally {
    spinner.stop();
    endLine();
  }
}
