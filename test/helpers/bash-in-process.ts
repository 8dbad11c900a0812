/**
 * Runs Keel's bash tool in a process of its own, for a test that starts this process under
 * conditions the test's own process cannot take on (another uid, a seccomp filter):
 *   node --import tsx test/helpers/bash-in-process.ts <workspace> <commands as a JSON array>
 * prints the tool results as one JSON array. The tool is the worker's: the same sandbox, the same
 * command runner (a child of this process, so under the same filter), the default configuration.
 * With `--launch` instead of commands, prints the bubblewrap invocation the sandbox makes for
 * `exit 0` in that workspace (a `SandboxedCommand`), for a test to run it under other conditions.
 */
import { bashTool } from '../../activities/tools/bash';
import { stopCommandRunner } from '../../activities/tools/command-runner';
import { Sandbox } from '../../activities/tools/sandbox';
import { parseConfig } from '../../platform/config';

async function main(): Promise<void> {
  const [workspace, commands] = process.argv.slice(2);
  if (workspace === undefined || commands === undefined) throw new Error('usage: <workspace> <commands>');
  const config = parseConfig({ PATH: process.env.PATH }, '/');
  const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);
  if (commands === '--launch') {
    process.stdout.write(JSON.stringify(await sandbox.command({ command: 'exit 0', workspace, env: {} })));
    return;
  }
  const results = [];
  for (const [index, command] of (JSON.parse(commands) as string[]).entries())
    results.push(
      await bashTool.run(
        { command },
        {
          threadId: 'seccomp',
          workspace,
          signal: new AbortController().signal,
          idempotencyKey: `seccomp:tool-${index}`,
          environment: config.childEnvironment,
          sandbox,
          networkHosts: [],
        },
      ),
    );
  await stopCommandRunner();
  process.stdout.write(JSON.stringify(results));
}

void main();
