/**
 * `bash`: runs a command in the workspace, in its own process group so a timeout or a cancel
 * stops everything it started. Output is capped while it streams, never buffered whole.
 */
import { spawn } from 'node:child_process';
import { z } from 'zod';
import { limits } from '../../common/limits';
import type { ToolOutcome } from '../../common/tools';
import { defineTool } from './registry';

const defaultTimeoutS = 120;
const maxTimeoutS = 600;
/** After SIGTERM, how long a command gets before SIGKILL. */
const killGraceMs = 2_000;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export interface CommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  totalChars: number;
  timedOut: boolean;
  aborted: boolean;
}

/** Runs `command` with bash in `cwd`, capturing interleaved stdout and stderr up to a cap. */
export function runCommand(
  command: string,
  options: { cwd: string; timeoutMs: number; signal: AbortSignal; env: Record<string, string> },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let totalChars = 0;
    let timedOut = false;
    let aborted = false;
    const collect = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      totalChars += text.length;
      if (output.length < limits.toolOutputChars)
        output += text.slice(0, limits.toolOutputChars - output.length);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const stop = (): void => {
      if (child.pid === undefined) return;
      killGroup(child.pid, 'SIGTERM');
      setTimeout(() => killGroup(child.pid!, 'SIGKILL'), killGraceMs).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      stop();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal, output, totalChars, timedOut, aborted });
    });
  });
}

function describe(result: CommandResult, timeoutS: number): ToolOutcome {
  const cut =
    result.totalChars > result.output.length
      ? `\n[… output truncated by Keel: showing ${result.output.length} of ${result.totalChars} characters]`
      : '';
  const body = `${result.output}${cut}`;
  if (result.timedOut)
    return { is_error: true, content: `Command timed out after ${timeoutS} s and was killed.\n${body}` };
  if (result.exitCode === 0) return { is_error: false, content: body === '' ? '(no output)' : body };
  const how =
    result.exitCode === null
      ? `was killed by ${result.signal ?? 'a signal'}`
      : `exited with code ${result.exitCode}`;
  return { is_error: true, content: `Command ${how}.\n${body}` };
}

export const bashTool = defineTool({
  name: 'bash',
  description:
    'Run a bash command in the conversation workspace (the current directory) and return its combined stdout and stderr. ' +
    'Use for listing, searching, building and running programs.',
  input: z.object({
    command: z.string().min(1).describe('The command line, run with bash -c'),
    timeout_s: z
      .number()
      .int()
      .positive()
      .max(maxTimeoutS)
      .optional()
      .describe(`Seconds before the command is killed (default ${defaultTimeoutS})`),
  }),
  flags: { sideEffects: true, sensitive: true },
  async run({ command, timeout_s }, context) {
    const env = {
      ...context.environment,
      KEEL_IDEMPOTENCY_KEY: context.idempotencyKey,
      KEEL_THREAD_ID: context.threadId,
      HOME: context.workspace,
    };
    const timeoutS = timeout_s ?? defaultTimeoutS;
    const result = await runCommand(command, {
      cwd: context.workspace,
      timeoutMs: timeoutS * 1000,
      signal: context.signal,
      env,
    });
    if (result.aborted) throw context.signal.reason ?? new Error('command aborted');
    return describe(result, timeoutS);
  },
});
