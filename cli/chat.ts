/**
 * `keel chat [thread]`: an interactive session. The answer is printed as it enters the
 * transcript, a spinner shows while the model thinks or a tool runs, approvals are asked with a
 * `[y/N]` prompt and a countdown, and the running cost follows every run.
 */
import { createInterface, type Interface } from 'node:readline';
import ora from 'ora';
import type { PendingApproval } from '../common/approvals';
import type { Run } from '../common/run';
import type { Thread } from '../common/thread';
import type { AssistantMessage } from '../common/transcript';
import { totalTokens } from '../common/usage';
import { ApiCallError, type KeelApiClient } from './api-client';
import { PollingRunFollower, type RunFollower } from './run-follower';

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
  approval: PendingApproval,
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
  const follower = options.follower ?? new PollingRunFollower(api);
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
  // A terminal that reports 0 columns (a fresh pty) makes ora's line counting loop; print plainly there.
  const columns = (output as { columns?: number }).columns ?? 0;
  const spinner = ora({
    stream: output,
    discardStdin: false,
    isEnabled: output.isTTY === true && columns > 0,
  });
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
      spinner.start('thinking…');
      const finished = await follower.follow(thread.thread_id, run.run_id, {
        onProgress(current) {
          if (spinner.isSpinning)
            spinner.text = `${current.status_reason === 'awaiting_approval' ? 'waiting for approval' : 'working'}… ${money(current.usage.cost_usd)}`;
        },
        onMessage(message: AssistantMessage) {
          spinner.stop();
          for (const block of message.content) {
            if (block.type === 'text') write(`keel › ${block.text}`);
            else write(`  ⚙ ${block.name} ${JSON.stringify(block.input)}`);
          }
          spinner.start('working…');
        },
        async onApproval(approval) {
          spinner.stop();
          const answer = await askApproval(readline, output, approval);
          if (answer !== 'expired') {
            try {
              await api.decide(thread.thread_id, approval.approval_id, answer);
              write(answer === 'approve' ? '  approved' : '  denied');
            } catch (error) {
              write(`  ${error instanceof Error ? error.message : String(error)}`);
            }
          }
          spinner.start('working…');
        },
      });
      spinner.stop();
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
