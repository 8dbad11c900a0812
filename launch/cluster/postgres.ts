/**
 * A private PostgreSQL cluster for Temporal: created with `initdb` in Keel's data dir from the
 * machine's packages (Debian's `postgresql`), listening on a loopback port only, never the
 * system service. PostgreSQL refuses to run as root, so a root launcher runs it as the
 * `postgres` user the package created.
 */
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { isExecutable, onPath } from '../go-install';
import { KeelError } from '../../common/errors';

const run = promisify(execFile);

export class PostgresUnavailable extends KeelError {
  override readonly name = 'PostgresUnavailable';
}

export interface PostgresOptions {
  /** The cluster's directory (PGDATA). */
  directory: string;
  port: number;
  user: string;
  password: string;
  /** PATH, to find `initdb` when it is not in /usr/lib/postgresql/<version>/bin. */
  searchPath: string | undefined;
}

export interface PostgresCommand {
  command: string;
  args: string[];
}

/** The newest /usr/lib/postgresql/<version>/bin with `initdb`, else the `initdb` on PATH. */
export async function findPostgresBin(searchPath: string | undefined): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = await readdir(root).catch(() => [] as string[]);
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const bin = path.join(root, version, 'bin');
    if (await isExecutable(path.join(bin, 'initdb'))) return bin;
  }
  const initdb = await onPath('initdb', searchPath);
  if (initdb !== undefined) return path.dirname(initdb);
  throw new PostgresUnavailable(
    'PostgreSQL was not found: install it (Debian: apt-get install postgresql; the server need not run as a service), ' +
      'or run your own Temporal cluster and point Keel at it with TEMPORAL_ADDRESS.',
  );
}

/** Root runs PostgreSQL as `postgres`: its uid and gid, or undefined when not root. */
async function serviceAccount(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    return { uid, gid };
  } catch {
    throw new PostgresUnavailable(
      'PostgreSQL refuses to run as root and there is no `postgres` user to run it as: run Keel as another user',
    );
  }
}

/** A PostgreSQL program, as the account that owns the cluster. */
async function asOwner(bin: string, program: string, args: string[]): Promise<PostgresCommand> {
  const account = await serviceAccount();
  const file = path.join(bin, program);
  if (account === undefined) return { command: file, args };
  return {
    command: 'setpriv',
    args: [`--reuid=${account.uid}`, `--regid=${account.gid}`, '--clear-groups', file, ...args],
  };
}

/**
 * Creates the cluster once (`initdb`, password authentication, loopback only, no Unix socket)
 * and returns the command that runs its server in the foreground.
 */
export async function preparePostgres(options: PostgresOptions): Promise<PostgresCommand> {
  const bin = await findPostgresBin(options.searchPath);
  const account = await serviceAccount();
  const initialised = await stat(path.join(options.directory, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    await mkdir(options.directory, { recursive: true, mode: 0o700 });
    const passwordFile = path.join(options.directory, '..', '.postgres-initial-password');
    await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
    if (account !== undefined) {
      // The server's account must reach its directory: traverse (not list) every parent Keel made.
      await chmod(path.dirname(options.directory), 0o711);
      await chmod(path.dirname(path.dirname(options.directory)), 0o711).catch(() => undefined);
      await chown(options.directory, account.uid, account.gid);
      await chown(passwordFile, account.uid, account.gid);
    }
    const initdb = await asOwner(bin, 'initdb', [
      '--pgdata',
      options.directory,
      '--username',
      options.user,
      '--pwfile',
      passwordFile,
      '--auth',
      'scram-sha-256',
      '--encoding',
      'UTF8',
      '--locale',
      'C',
    ]);
    try {
      await run(initdb.command, initdb.args);
    } catch (error) {
      const detail = (error as { stderr?: string }).stderr ?? (error as Error).message;
      await rm(options.directory, { recursive: true, force: true });
      throw new PostgresUnavailable(`initdb failed: ${detail.trim()}`, { cause: error });
    } finally {
      await rm(passwordFile, { force: true });
    }
    const settings = path.join(options.directory, 'postgresql.conf');
    await writeFile(
      settings,
      `${await readFile(settings, 'utf8')}\n# Keel: a private cluster for Temporal, loopback only.\n` +
        "listen_addresses = '127.0.0.1'\n" +
        "unix_socket_directories = ''\n" +
        // Four services, each with its own pools (persistence and visibility), and the schema tool.
        'max_connections = 300\n',
    );
  }
  return asOwner(bin, 'postgres', ['-D', options.directory, '-p', String(options.port)]);
}

/** Resolves once the server accepts connections, or rejects after `timeoutMs`. */
export async function waitForPostgres(
  port: number,
  timeoutMs: number,
  alive: () => boolean,
  searchPath: string | undefined,
): Promise<void> {
  const isready = path.join(await findPostgresBin(searchPath), 'pg_isready');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive()) {
    try {
      await run(isready, ['-h', '127.0.0.1', '-p', String(port), '-t', '1']);
      return;
    } catch {
      await sleep(250);
    }
  }
  throw new PostgresUnavailable(
    `PostgreSQL on 127.0.0.1:${port} did not accept connections within ${timeoutMs / 1000} s (see its log)`,
  );
}
