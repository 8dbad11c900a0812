/**
 * Where one sandboxed `bash` call's time goes (decision 0270): N sequential calls of each of a
 * ladder of commands, from a bare `/bin/sh -c true` to the bash tool itself, spawned from this
 * process, with wall time and CPU per call — this process's main thread (from its schedstat, in
 * ns), the whole process, the children (the command runner, bubblewrap and everything under it,
 * from /proc, in 10 ms ticks summed over the calls) and the whole machine (from /proc/stat, so other
 * load shows there too). `--ballast-mb` makes this process as large as a worker (~450 MiB
 * resident) first: libuv spawns with `fork`, whose cost grows with the parent's page tables.
 *
 *   npx tsx bench/sandbox-call.ts [--calls 200] [--ballast-mb 400] [--only keel,bash-tool]
 */
import childProcess from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { bashTool } from '../activities/tools/bash';
import { runCommand } from '../activities/tools/command-runner';
import type { ToolContext } from '../activities/tools/registry';
import { Sandbox, type SandboxedCommand } from '../activities/tools/sandbox';
import { workspaceFor } from '../activities/tools/workspace';
import { parseConfig } from '../platform/config';

const options = new Command()
  .option('--calls <n>', 'calls per variant', '200')
  .option('--ballast-mb <mb>', 'resident memory to add to this process first', '0')
  .option('--only <names>', 'comma-separated variant names')
  .parse()
  .opts<{ calls: string; ballastMb: string; only?: string }>();

const ticksPerSecond = 100;

/** ns this thread (the main one) has run, from the kernel's scheduler statistics. */
function mainThreadNs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

/** Fields of /proc/<pid>/stat after the command name: stat(5)'s field n is index n - 3. */
function statFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU ms of this process's children: those waited for (and theirs), from cutime and cstime, and
 * those alive (the command runner, with the commands it waited for), from their own stat.
 */
function childrenMs(): number {
  const self = statFields('self');
  let ticks = Number(self[13]) + Number(self[14]);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = statFields(Number(name));
      if (Number(fields[1]) !== process.pid) continue;
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // Gone meanwhile.
    }
  }
  return (ticks * 1000) / ticksPerSecond;
}

/** Busy CPU ms of the whole machine (all cores), from /proc/stat. */
function machineMs(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return ((cpu.reduce((sum, value) => sum + value, 0) - idle) * 1000) / ticksPerSecond;
}

/** Time spent inside `spawn()` itself (the fork and the wait for exec), summed in ns. */
let spawnNs = 0;
const originalSpawn = childProcess.spawn;
(childProcess as { spawn: typeof childProcess.spawn }).spawn = ((
  ...args: Parameters<typeof originalSpawn>
) => {
  const start = process.hrtime.bigint();
  try {
    return originalSpawn(...args);
  } finally {
    spawnNs += Number(process.hrtime.bigint() - start);
  }
}) as typeof childProcess.spawn;

interface Variant {
  name: string;
  what: string;
  call: () => Promise<void>;
}

const never = new AbortController().signal;

async function run(launch: SandboxedCommand, expected?: string): Promise<void> {
  const result = await runCommand(launch, { timeoutMs: 30_000, signal: never });
  if (result.exitCode !== 0 || (expected !== undefined && result.output !== expected))
    throw new Error(`${launch.file} ${launch.args.join(' ')}: exit ${result.exitCode}: ${result.output}`);
}

function plain(file: string, args: string[]): SandboxedCommand {
  return { file, args, cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, inputs: [] };
}

/** Keel's invocation with its arguments changed by `edit`: what a piece costs is the difference. */
function edited(launch: SandboxedCommand, edit: (args: string[]) => string[]): SandboxedCommand {
  return { ...launch, args: edit([...launch.args]) };
}

function without(args: string[], flag: string, values = 0): string[] {
  const index = args.indexOf(flag);
  if (index < 0) throw new Error(`no ${flag} in the invocation`);
  args.splice(index, 1 + values);
  return args;
}

/** Everything from `--` on replaced by `tail`. */
function withTail(args: string[], tail: string[]): string[] {
  return [...args.slice(0, args.indexOf('--') + 1), ...tail];
}

async function main(): Promise<void> {
  const ballast: Buffer[] = [];
  for (let mb = 0; mb < Number(options.ballastMb); mb += 16) ballast.push(Buffer.alloc(16 * 1024 * 1024, 1));

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-sandbox-call-'));
  const config = parseConfig({ PATH: process.env.PATH }, '/');
  const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);
  const workspace = await workspaceFor(dataDir, 'thread-1');
  const context: ToolContext = {
    threadId: 'thread-1',
    workspace,
    signal: never,
    idempotencyKey: 'thread-1:tool-1',
    environment: config.childEnvironment,
    sandbox,
    networkHosts: [],
  };
  const keel = await sandbox.command({ command: 'echo hi', workspace, env: {} });
  const root = process.getuid?.() === 0;
  // As root the command starts with setpriv, before the limits shell.
  const setpriv = root
    ? keel.args.slice(keel.args.indexOf('--') + 1, keel.args.indexOf('--no-new-privs') + 1)
    : [];
  const bwrapBare = ['--ro-bind', '/', '/'];
  const variants: Variant[] = [
    { name: 'sh', what: '/bin/sh -c true', call: () => run(plain('/bin/sh', ['-c', 'true'])) },
    { name: 'true', what: '/bin/true', call: () => run(plain('/bin/true', [])) },
    {
      name: 'bwrap',
      what: 'bwrap --ro-bind / / true',
      call: () => run(plain('bwrap', [...bwrapBare, 'true'])),
    },
    ...['pid', 'ipc', 'uts', 'cgroup', 'net', 'user'].map((namespace) => ({
      name: `bwrap+${namespace}`,
      what: `bwrap --ro-bind / / --unshare-${namespace} true`,
      call: () => run(plain('bwrap', [...bwrapBare, `--unshare-${namespace}`, 'true'])),
    })),
    {
      name: 'bwrap+all-ns',
      what: 'bwrap --ro-bind / / with pid, ipc, uts, cgroup, net namespaces, true',
      call: () =>
        run(
          plain('bwrap', [
            ...bwrapBare,
            ...['pid', 'ipc', 'uts', 'cgroup', 'net'].map((namespace) => `--unshare-${namespace}`),
            'true',
          ]),
        ),
    },
    {
      name: 'keel-true',
      what: "Keel's bwrap arguments, running /bin/true (no setpriv, no shells)",
      call: () => run(edited(keel, (args) => withTail(args, ['/bin/true']))),
    },
    {
      name: 'keel-setpriv-true',
      what: "Keel's bwrap arguments and setpriv, running /bin/true (no shells)",
      call: () => run(edited(keel, (args) => withTail(args, [...setpriv, '/bin/true']))),
    },
    {
      name: 'keel-one-shell',
      what: "Keel's bwrap arguments and setpriv, bash -c 'echo hi' (no limits shell)",
      call: () =>
        run(
          edited(keel, (args) =>
            withTail(args, [...setpriv, 'bash', '--noprofile', '--norc', '-c', 'echo hi']),
          ),
          'hi\n',
        ),
    },
    {
      name: 'keel-no-net',
      what: "Keel's full invocation without --unshare-net",
      call: () =>
        run(
          edited(keel, (args) => without(args, '--unshare-net')),
          'hi\n',
        ),
    },
    {
      name: 'keel-no-proc-dev',
      what: "Keel's full invocation without --proc /proc and --dev /dev",
      call: () =>
        run(
          edited(keel, (args) => without(without(args, '--proc', 1), '--dev', 1)),
          'hi\n',
        ),
    },
    { name: 'keel', what: "Keel's full invocation: echo hi", call: () => run(keel, 'hi\n') },
    {
      name: 'keel-build',
      what: 'Sandbox.command() alone (building the invocation, chown)',
      call: async () => {
        await sandbox.command({ command: 'echo hi', workspace, env: {} });
      },
    },
    {
      name: 'workspace',
      what: 'workspaceFor() alone (mkdir -p, realpath)',
      call: async () => {
        await workspaceFor(dataDir, 'thread-1');
      },
    },
    {
      name: 'bash-tool',
      what: 'the bash tool: workspaceFor + bashTool.run({ command: "echo hi" })',
      call: async () => {
        await workspaceFor(dataDir, 'thread-1');
        const outcome = await bashTool.run({ command: 'echo hi' }, context);
        if (outcome.is_error || outcome.content !== 'hi\n') throw new Error(JSON.stringify(outcome));
      },
    },
  ];
  const only = options.only?.split(',');
  const calls = Number(options.calls);
  console.log(
    `${calls} calls each; node ${process.version}, ${root ? 'root' : 'non-root'}, ` +
      `resident ${Math.round(process.memoryUsage().rss / 1048576)} MiB, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  console.log('ms per call:  wall  main-thread  process  in-spawn()  children  machine   variant');
  for (const variant of variants) {
    if (only !== undefined && !only.includes(variant.name)) continue;
    for (let warm = 0; warm < 5; warm++) await variant.call();
    spawnNs = 0;
    const start = { wall: process.hrtime.bigint(), main: mainThreadNs(), cpu: process.cpuUsage() };
    const children = childrenMs();
    const machine = machineMs();
    for (let index = 0; index < calls; index++) await variant.call();
    const cpu = process.cpuUsage(start.cpu);
    const per = (value: number): string => (value / calls).toFixed(2).padStart(6);
    console.log(
      `        ${per(Number(process.hrtime.bigint() - start.wall) / 1e6)}  ${per((mainThreadNs() - start.main) / 1e6)}` +
        `       ${per((cpu.user + cpu.system) / 1000)}  ${per(spawnNs / 1e6)}      ${per(childrenMs() - children)}` +
        `    ${per(machineMs() - machine)}   ${variant.name}: ${variant.what}`,
    );
  }
  console.log(
    `load after ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  ballast.length = 0;
  await rm(dataDir, { recursive: true, force: true });
}

void main();
