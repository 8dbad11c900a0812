/**
 * What the shipping tests share: commands run to completion with their output kept for the
 * failure message, and npm's flags for installing from the local cache first (the registry is
 * only asked for what the cache lacks).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export const repositoryRoot = path.resolve(__dirname, '../..');

/** `npm install`/`npm ci` flags: the cache first, no audit or funding requests. */
export const offlineFirst = ['--prefer-offline', '--no-audit', '--no-fund'];

const execFileAsync = promisify(execFile);

/** Runs a command; on failure the error carries its stdout and stderr. */
export async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeoutMs ?? 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${options.cwd}:\n${stdout}\n${stderr}`, {
      cause: error,
    });
  }
}
