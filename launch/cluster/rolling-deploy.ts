/**
 * A rolling deploy of the worker hosts (decision 0142): the workflow code on disk is bundled
 * again, then each host in turn drains and is replaced, the next once Temporal sees the new
 * process polling, so the task queue never lacks a worker.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { KeelConfig } from '../../platform/config';
import { buildWorkflowBundle } from '../../worker/bundle';
import type { Supervised } from '../supervisor';
import { say } from '../up';
import { isPolling, workerIdentity } from './namespace';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';

export interface WorkerHost {
  name: string;
  dataDir: string;
  process: Supervised;
}

/** The workflow code on disk, bundled into the data dir (one file per deploy: running hosts keep theirs). */
export async function bundleWorkflows(dataDir: string, deploy: number): Promise<string> {
  const file = path.join(dataDir, deploy === 0 ? 'workflow-bundle.js' : `workflow-bundle-${deploy}.js`);
  await writeFile(file, await buildWorkflowBundle());
  return file;
}

/**
 * Resolves with the host's worker pid once Temporal sees that process polling the task queue
 * (its identity is `<its pid>@host`: the watchdog's child's pid, not the watchdog's). Throws after
 * `timeoutMs`; resolves undefined when `given` says to stop waiting.
 */
export async function waitUntilPolling(
  connection: Connection,
  config: KeelConfig,
  host: WorkerHost,
  timeoutMs: number,
  given = (): boolean => false,
): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pid = host.process.programPid;
    const polling =
      pid !== undefined &&
      (await isPolling(connection, config.temporal.namespace, config.taskQueue, workerIdentity(pid)).catch(
        () => false,
      ));
    if (polling) return pid;
    if (given()) return undefined;
    if (Date.now() > deadline)
      throw new Error(`${host.name} (pid ${pid ?? '?'}) did not start polling within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

/**
 * A rolling deploy of the code on disk now: the workflow code is bundled again, then each worker
 * host in turn drains (SIGTERM) and is replaced by a new process; the next waits until Temporal
 * sees the new one polling, so the task queue never lacks a worker.
 */
export async function rollWorkerHosts(
  config: KeelConfig,
  frontend: string,
  hosts: WorkerHost[],
  deploy: number,
  keelEnv: (dataDir: string, workflowBundle: string) => NodeJS.ProcessEnv,
): Promise<void> {
  say(
    `Rolling deploy ${deploy}: bundling the workflow code, then replacing ${hosts.length} worker hosts one at a time…`,
  );
  const connection = await Connection.connect({ address: frontend, interceptors: guardedInterceptors() });
  try {
    const bundle = await bundleWorkflows(config.dataDir, deploy);
    for (const host of hosts) {
      const before = host.process.programPid;
      await host.process.restart((config.shutdownGraceS + 10) * 1000, keelEnv(host.dataDir, bundle));
      const pid = await waitUntilPolling(connection, config, host, 120_000);
      say(`Rolling deploy: ${host.name} replaced (pid ${before} → ${pid}) and polling`);
    }
    say(`Rolling deploy done: ${hosts.length} worker hosts replaced.`);
  } catch (error) {
    say(`Rolling deploy stopped: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await connection.close();
  }
}
