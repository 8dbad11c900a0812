/**
 * Keeps `keel up`'s Temporal dev server serving: started again when it dies, and killed and
 * started again when it stops answering. The dev server keeps everything in one SQLite file, so
 * a new one carries on from where the old one was; the worker and the API reconnect on their own.
 *
 * A stall is real: the dev server works its database through one SQLite connection, and a
 * request cancelled at the wrong moment can leave that connection interrupted for good — every
 * query after it fails with `interrupted (9)` while the process looks alive (seen in CI after half
 * an hour of load). Only a new process mends it (decision 0417).
 */
import { Connection } from '@temporalio/client';
import { type DevServer, type DevServerOptions, startDevServer } from './dev-server';

export interface DevServerKeeperOptions extends DevServerOptions {
  /** How long it may go without answering before it is killed and started again. */
  stallMs: number;
  /** Said when it is started again, and why. */
  report: (line: string) => void;
}

/** What `keel up` holds: the server of the moment, whichever that is. */
export interface KeptDevServer {
  address: string;
  uiUrl: string;
  databaseFile: string;
  /** How many times it was started again. */
  readonly restarts: number;
  /** Stops keeping it, then stops it as `DevServer.stop` does. */
  stop(graceMs?: number): Promise<void>;
  /** For a forced exit: no waiting. */
  kill(): void;
}

const maxBackoffMs = 30_000;

/** Resolves once the first server answers; rejects as `startDevServer` does when it cannot start. */
export async function keepDevServer(options: DevServerKeeperOptions): Promise<KeptDevServer> {
  let current: DevServer = await startDevServer(options);
  let stopping = false;
  let restarting = false;
  let restarts = 0;
  let backoffMs = 1_000;
  let lastAnswer = Date.now();
  let lastError = '';
  let timer: NodeJS.Timeout | undefined;
  const probe = Connection.lazy({ address: current.address, interceptors: [] });
  const probeEveryMs = Math.max(1_000, Math.floor(options.stallMs / 3));

  const restart = async (why: string): Promise<void> => {
    if (stopping || restarting) return;
    restarting = true;
    options.report(`the Temporal dev server ${why}; starting it again (its data is kept)`);
    const old = current.process;
    const gone = new Promise<void>((resolve) => {
      if (old.exitCode !== null || old.signalCode !== null) resolve();
      else old.once('exit', () => resolve());
    });
    current.kill();
    await gone;
    while (!stopping) {
      try {
        current = await startDevServer(options);
        if (stopping) {
          current.kill();
          return;
        }
        restarts += 1;
        backoffMs = 1_000;
        lastAnswer = Date.now();
        watchExit(current);
        options.report('the Temporal dev server is serving again');
        break;
      } catch (error) {
        options.report(
          `the Temporal dev server did not start (${error instanceof Error ? error.message : String(error)}); trying again in ${backoffMs / 1000} s`,
        );
        await new Promise((resolve) => setTimeout(resolve, backoffMs));
        backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
      }
    }
    restarting = false;
  };

  const watchExit = (server: DevServer): void => {
    server.process.once('exit', (code, signal) => {
      if (stopping || server !== current || restarting) return;
      void restart(`stopped unexpectedly (${signal ?? `exit code ${code}`})`);
    });
  };
  watchExit(current);

  // A read that needs its database: the namespace (a frontend answers `GetSystemInfo` alone).
  const check = async (): Promise<void> => {
    if (stopping || restarting) return;
    try {
      await probe.withDeadline(Date.now() + Math.min(5_000, probeEveryMs), () =>
        probe.workflowService.describeNamespace({ namespace: options.namespace }),
      );
      lastAnswer = Date.now();
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      const silentMs = Date.now() - lastAnswer;
      if (silentMs >= options.stallMs && !stopping && !restarting)
        await restart(`has not answered for ${Math.round(silentMs / 1000)} s (${lastError})`);
    }
  };
  const schedule = (): void => {
    timer = setTimeout(() => {
      void check().finally(() => {
        if (!stopping) schedule();
      });
    }, probeEveryMs);
    timer.unref();
  };
  schedule();

  const release = async (): Promise<void> => {
    stopping = true;
    clearTimeout(timer);
    await probe.close().catch(() => undefined);
  };
  return {
    address: current.address,
    uiUrl: current.uiUrl,
    databaseFile: current.databaseFile,
    get restarts() {
      return restarts;
    },
    async stop(graceMs) {
      await release();
      await current.stop(graceMs);
    },
    kill() {
      stopping = true;
      clearTimeout(timer);
      current.kill();
    },
  };
}
