/**
 * `bash`: runs a command in the thread's sandbox (./sandbox.ts), spawned by the worker's command
 * runner (./command-runner.ts) in its own process group so a timeout or a cancel stops everything
 * it started. Output is capped while it streams, never buffered whole. With no sandbox on this
 * machine it answers so, in-band, and runs nothing — unless the operator chose `KEEL_SANDBOX=off`.
 */
import { z } from 'zod';
import type { ToolOutcome } from '../../common/tools';
import { runCommand, type CommandResult, type DiskStop } from './command-runner';
import { mebibytes } from './disk-room';
import { withoutHostPaths } from './host-paths';
import { startNetworkProxy, type NetworkProxy } from './network-proxy';
import { defineTool } from './registry';
import { type Sandbox, type SandboxedCommand, type SandboxProbe, sandboxFix } from './sandbox';

const maxTimeoutS = 600;

function diskStopped(stop: DiskStop, guard: DiskBounds): string {
  if (stop.kind === 'quota')
    return (
      `Command stopped by Keel: the workspace reached ${mebibytes(stop.usedBytes)} MiB, past its quota of ` +
      `${mebibytes(guard.quotaBytes)} MiB. Delete files to make room.`
    );
  if (stop.kind === 'workspaceInodes')
    return (
      `Command stopped by Keel: the workspace reached ${stop.usedInodes} files and directories, past its ` +
      `quota of ${guard.quotaInodes}. Delete files to make room.`
    );
  if (stop.kind === 'inodes')
    return (
      `Command stopped by Keel: the disk that holds workspaces was down to ${stop.freeInodes} free inodes ` +
      `(files it can still create), within the ${guard.reserveInodes} kept for Keel and other threads. ` +
      `Delete files to make room.`
    );
  return (
    `Command stopped by Keel: the disk that holds workspaces was down to ${mebibytes(stop.freeBytes)} MiB free, ` +
    `within the ${mebibytes(guard.reserveBytes)} MiB kept for Keel and other threads.`
  );
}

type DiskBounds = { quotaBytes: number; reserveBytes: number; reserveInodes: number; quotaInodes: number };

function describe(result: CommandResult, timeoutS: number, guard: DiskBounds): ToolOutcome {
  const cut =
    result.totalChars > result.output.length
      ? `\n[… output truncated by Keel: showing ${result.output.length} of ${result.totalChars} characters]`
      : '';
  const body = `${result.output}${cut}`;
  if (result.diskStop !== null)
    return { is_error: true, content: `${diskStopped(result.diskStop, guard)}\n${body}` };
  if (result.timedOut)
    return { is_error: true, content: `Command timed out after ${timeoutS} s and was killed.\n${body}` };
  if (result.exitCode === 0) return { is_error: false, content: body === '' ? '(no output)' : body };
  const how =
    result.exitCode === null
      ? `was killed by ${result.signal ?? 'a signal'}`
      : `exited with code ${result.exitCode}`;
  return { is_error: true, content: `Command ${how}.\n${body}` };
}

/** Creates one sandbox to find out whether this machine can (once per process). */
export function probeSandbox(sandbox: Sandbox): Promise<SandboxProbe> {
  return sandbox.probe(async (launch) => {
    const result = await runCommand(launch, { timeoutMs: 30_000, signal: new AbortController().signal });
    return { ok: result.exitCode === 0, output: result.output };
  });
}

/** What an operator should read at start about the sandbox: one line, and whether all is well. */
export async function describeSandbox(
  sandbox: Sandbox,
  network: 'on' | 'off',
): Promise<{ ok: boolean; line: string }> {
  if (sandbox.mode === 'off')
    return {
      ok: false,
      line:
        'WARNING: KEEL_SANDBOX=off: the bash tool runs model-chosen commands unconfined, as this user, ' +
        "with this machine's files, network and the worker's process list. Unset it to confine them.",
    };
  const probe = await probeSandbox(sandbox);
  if (!probe.ok)
    return {
      ok: false,
      line: `The sandbox for the bash tool cannot be created on this machine: ${probe.reason}. Until it can, bash answers every call with an error (everything else works). ${sandboxFix}`,
    };
  return { ok: true, line: `bubblewrap, network ${network}` };
}

function unconfined(command: string, workspace: string, env: Record<string, string>): SandboxedCommand {
  return {
    file: 'bash',
    args: ['-c', command],
    cwd: workspace,
    env: { ...env, HOME: workspace },
    inputs: [],
  };
}

export const bashTool = defineTool({
  name: 'bash',
  description:
    'Run a bash command in the conversation workspace (the current directory) and return its combined stdout and stderr. ' +
    'Use for listing, searching, building and running programs. It runs in a sandbox: only the workspace is writable, and the network is off unless the operator allowed it.',
  input: z.object({
    command: z.string().min(1).describe('The command line, run with bash -c'),
    timeout_s: z
      .number()
      .int()
      .positive()
      .max(maxTimeoutS)
      .optional()
      .describe('Seconds before the command is killed (default 120, or as the operator set it)'),
  }),
  flags: { sideEffects: true, sensitive: true },
  async run({ command, timeout_s }, context) {
    // Per-call context, not configuration: no secret and no operator setting reaches a command.
    const env = {
      ...context.environment,
      KEEL_IDEMPOTENCY_KEY: context.idempotencyKey,
      KEEL_THREAD_ID: context.threadId,
    };
    const { sandbox, workspace } = context;
    let launch: SandboxedCommand;
    let proxy: NetworkProxy | undefined;
    if (sandbox.mode === 'off') launch = unconfined(command, workspace, env);
    else {
      const probe = await probeSandbox(sandbox);
      if (!probe.ok)
        return {
          is_error: true,
          content: `Not run: commands run in a sandbox, and this worker cannot create one (${withoutHostPaths(probe.reason)}). ${sandboxFix}`,
        };
      proxy =
        context.networkHosts.length === 0
          ? undefined
          : await startNetworkProxy({ hosts: context.networkHosts, operatorHosts: sandbox.operatorHosts });
      launch = await sandbox.command({ command, workspace, env, ...(proxy === undefined ? {} : { proxy }) });
    }
    try {
      const timeoutS = timeout_s ?? sandbox.limits.wallSeconds;
      const guard = sandbox.diskGuard(workspace);
      const result = await runCommand(launch, { timeoutMs: timeoutS * 1000, signal: context.signal, guard });
      if (result.aborted) throw context.signal.reason ?? new Error('command aborted');
      return describe(result, timeoutS, guard);
    } finally {
      await proxy?.close();
    }
  },
});
