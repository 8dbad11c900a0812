/**
 * `keel`: one entry point for every Keel process and command.
 *   keel up       the whole system (what `npm start` runs); --cluster: on a Temporal cluster (`npm run cluster`)
 *   keel worker   a worker process
 *   keel api      the HTTP API process
 *   keel chat     talk to a thread, interactively or piped (through the API)
 *   keel threads  list, show, export, delete and clean up threads
 *   keel approve / keel deny   decide a pending approval
 * The first three launch processes (`launch/`); the rest are the user's client of the HTTP API.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../launch/env';
import { apiProcess, workerProcess } from '../launch/processes';
import { upCluster } from '../launch/cluster/up-cluster';
import { up } from '../launch/up';
import { KeelApiClient } from './api-client';
import { styleFor } from './style';
import { chat } from './chat';
import {
  cleanupThreads,
  decide,
  deleteThread,
  exportThread,
  listThreads,
  showThread,
  type ListOptions,
} from './threads';

/** One readable line and a non-zero exit for anything that ends a command. */
function fail(error: unknown): never {
  const message =
    error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
  process.stderr.write(`keel: ${message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}

const program = new Command('keel')
  .description('Durable AI agents on Temporal')
  .showHelpAfterError('(add --help for usage)');

program
  .command('up')
  .description('start Temporal (dev server), the worker and the API; Ctrl-C stops them in order')
  .option(
    '--cluster',
    'a Temporal cluster instead: PostgreSQL, the four services, the Web UI, several worker hosts and the API',
  )
  .action(async (options: { cluster?: boolean }) => {
    const config = loadConfig();
    process.exitCode = options.cluster === true ? await upCluster(config) : await up(config);
    process.exit();
  });
program.command('worker').description('run a worker process').action(workerProcess);
program.command('api').description('run the HTTP API process').action(apiProcess);

program
  .option('--url <url>', 'the Keel API (default: http://KEEL_API_HOST:KEEL_API_PORT)')
  .option('--token <token>', 'bearer token, when the API requires one');

/** The API client for the client commands: --url, else this machine's configured API address. */
function apiClient(): KeelApiClient {
  const { url, token } = program.opts<{ url?: string; token?: string }>();
  if (url !== undefined) return new KeelApiClient(url.replace(/\/$/, ''), token);
  const { api } = loadConfig();
  const host = api.host.includes(':') ? `[${api.host}]` : api.host;
  return new KeelApiClient(`http://${host}:${api.port}`, token);
}

const write = (text: string) => void process.stdout.write(`${text}\n`);
const positiveNumber = (value: string) => {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('must be a positive number');
  return parsed;
};
const positiveInteger = (value: string) => {
  const parsed = positiveNumber(value);
  if (!Number.isInteger(parsed)) throw new InvalidArgumentError('must be a whole number');
  return parsed;
};
const days = (value: string) => {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new InvalidArgumentError('must be a number of days, 0 or more');
  return parsed;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];

program
  .command('chat [thread]')
  .description(
    'talk to a thread (created when missing); approvals are asked here. A line ending in \\ continues ' +
      'the message; on a terminal a pasted block of lines is one message',
  )
  .addOption(new Option('--require-approval', 'ask before sensitive tools run').conflicts('autoApprove'))
  .option('--auto-approve', 'run every tool without asking')
  .addOption(
    new Option('--approve-all', 'answer every approval with yes, without asking').conflicts('denyAll'),
  )
  .option('--deny-all', 'answer every approval with no, without asking')
  .option('--max-tokens <n>', 'token budget for the thread', positiveInteger)
  .option('--max-cost <usd>', 'cost budget for the thread, in dollars', positiveNumber)
  .option('--model <provider:model>', 'the model, e.g. scripted:demo or anthropic:claude-sonnet-4-6')
  .action(
    async (
      thread: string | undefined,
      options: {
        requireApproval?: boolean;
        autoApprove?: boolean;
        approveAll?: boolean;
        denyAll?: boolean;
        maxTokens?: number;
        maxCost?: number;
        model?: string;
      },
    ) => {
      await chat({
        api: apiClient(),
        ...(thread === undefined ? {} : { threadId: thread }),
        ...(options.requireApproval === true ? { approval: 'require' as const } : {}),
        ...(options.autoApprove === true ? { approval: 'auto' as const } : {}),
        ...(options.approveAll === true ? { answerApprovals: 'approve' as const } : {}),
        ...(options.denyAll === true ? { answerApprovals: 'deny' as const } : {}),
        ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
        ...(options.maxCost === undefined ? {} : { maxCostUsd: options.maxCost }),
        ...(options.model === undefined ? {} : { model: options.model }),
        style: styleFor(process.stdout, process.env),
      });
      process.exit(0);
    },
  );

const threads = program.command('threads').description('list, show, export and clean up threads');
threads
  .command('list')
  .description('threads, newest first, filtered by status, owner, metadata and age')
  .option('--status <status...>', 'idle, busy, interrupted, error or closed')
  .option('--owner <owner>', 'only this owner')
  .option('--metadata <key=value>', 'metadata that must match (repeatable)', collect)
  .option('--older-than-days <n>', 'created more than n days ago', days)
  .option('--limit <n>', 'at most n threads', positiveInteger)
  .option('--json', 'print JSON')
  .action(async (options: ListOptions) =>
    listThreads(apiClient(), options, write, styleFor(process.stdout, process.env)),
  );
threads
  .command('show <thread>')
  .description('a thread: status, limits, usage summary and recent runs')
  .action(async (thread: string) => showThread(apiClient(), thread, write));
threads
  .command('export <thread>')
  .description('the transcript as JSON or Markdown')
  .addOption(
    new Option('--format <format>', 'json or markdown').choices(['json', 'markdown']).default('markdown'),
  )
  .option('-o, --output <file>', 'write to a file instead of stdout')
  .action(async (thread: string, options: { format: 'json' | 'markdown'; output?: string }) =>
    exportThread(apiClient(), thread, options, write),
  );
threads
  .command('cleanup')
  .description('close and delete threads older than n days (a dry run unless --yes)')
  .requiredOption('--older-than-days <n>', 'created more than n days ago', days)
  .option('--status <status...>', 'only these statuses (default: idle, error, closed)')
  .option('--metadata <key=value>', 'metadata that must match (repeatable)', collect)
  .option('--yes', 'really delete')
  .action(async (options: ListOptions & { olderThanDays: number; yes?: boolean }) =>
    cleanupThreads(apiClient(), options, write),
  );
threads
  .command('delete <thread>')
  .description('close and delete one thread')
  .action(async (thread: string) => deleteThread(apiClient(), thread, write));

program
  .command('approve <thread> <approval>')
  .description('approve a pending tool call')
  .action(async (thread: string, approval: string) =>
    decide(apiClient(), thread, approval, 'approve', undefined, write),
  );
program
  .command('deny <thread> <approval>')
  .description('deny a pending tool call; the reason is shown to the model')
  .option('--reason <text>', 'why')
  .action(async (thread: string, approval: string, options: { reason?: string }) =>
    decide(apiClient(), thread, approval, 'deny', options.reason, write),
  );

program.parseAsync(process.argv).catch(fail);
