/**
 * What the cluster test drives: `keel up --cluster` as a child process, its process tree, free
 * ports for a whole cluster, and conversations chatting through an API until told to stop.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { allPorts, clusterPorts, portsInUse } from '../../launch/cluster/ports';
import { freePort } from '../helpers/api';
import { programs } from '../helpers/process-tree';
import { accepts, type KeelUp, keelUp } from '../helpers/keel-up';
import { awaitRunEnd, IntakeLedger, submitUntilAccepted } from './api-chat';

export type Cluster = KeelUp;

export const keelUpCluster = (env: Record<string, string>): Cluster => keelUp(['--cluster'], env);

export { descendants, programs } from '../helpers/process-tree';
export { accepts } from '../helpers/keel-up';

export function childPid(cluster: Cluster, matching: string): number {
  const found = programs(cluster.process.pid!).find((row) => row.args.includes(matching));
  if (found === undefined) throw new Error(`no process "${matching}" under the cluster`);
  return found.pid;
}

/**
 * A free frontend port with the ports the other services take above and below it, and `hosts`
 * free metrics ports in a row for the worker hosts (host n serves on the first + n − 1).
 */
export async function freeClusterPorts(hosts: number): Promise<Record<string, string>> {
  for (;;) {
    // Membership ports (300 below) must fit Temporal's smallint column.
    const frontend = 10_000 + Math.floor(Math.random() * 22_000);
    const metrics = 10_000 + Math.floor(Math.random() * 22_000);
    const [postgres, ui, api] = [await freePort(), await freePort(), await freePort()];
    const metricsPorts = Array.from({ length: hosts }, (_, index) => metrics + index);
    const ports = [...allPorts(clusterPorts(frontend, postgres, ui)), ...metricsPorts];
    if (new Set(ports).size === ports.length && (await portsInUse(ports)).length === 0)
      return {
        KEEL_TEMPORAL_PORT: String(frontend),
        KEEL_POSTGRES_PORT: String(postgres),
        KEEL_TEMPORAL_UI_PORT: String(ui),
        KEEL_API_PORT: String(api),
        KEEL_WORKER_METRICS_PORT: String(metrics),
      };
  }
}

/** Conversations chatting through the API until told to stop, each refusal counted in the current phase's ledger. */
export class Traffic {
  readonly sent = new Map<string, string[]>();
  readonly failures: string[] = [];
  completed = 0;
  readonly completedBy = new Map<string, number>();
  ledger = new IntakeLedger();
  #stopping = false;
  #loops: Promise<void>[] = [];

  constructor(
    readonly api: string,
    readonly threads: string[],
  ) {}

  start(): void {
    this.#loops = this.threads.map(async (threadId) => {
      this.sent.set(threadId, []);
      for (let turn = 1; !this.#stopping; turn++) {
        // A tool that takes a second, so a deploy or a crash finds turns mid-tool.
        const text = `run: echo ${threadId}-${turn} >> marker\nrun: sleep 1; echo slept ${turn}`;
        this.sent.get(threadId)!.push(text);
        const ledger = this.ledger;
        try {
          const run = await submitUntilAccepted(this.api, threadId, text, ledger, {
            runId: `turn-${turn}`,
            create: turn === 1,
            deadline: Date.now() + 180_000,
          });
          const done = await awaitRunEnd(this.api, threadId, run.run_id, ledger, Date.now() + 180_000);
          if (done.status === 'completed') {
            this.completed++;
            this.completedBy.set(threadId, (this.completedBy.get(threadId) ?? 0) + 1);
          } else this.failures.push(`${threadId} turn ${turn}: ${done.status} ${done.error?.message ?? ''}`);
        } catch (error) {
          this.failures.push(`${threadId} turn ${turn}: ${(error as Error).message}`);
        }
      }
    });
  }

  /** Waits until `count` more turns than now have completed. */
  async progress(count: number, timeoutMs: number): Promise<void> {
    const target = this.completed + count;
    const deadline = Date.now() + timeoutMs;
    while (this.completed < target) {
      if (Date.now() > deadline)
        throw new Error(
          `only ${this.completed} of ${target} turns completed; failures: ${this.failures.join('; ')}`,
        );
      await sleep(200);
    }
  }

  /** Waits until every thread has completed `count` more turns than now. */
  async progressEach(count: number, timeoutMs: number): Promise<void> {
    const targets = this.threads.map(
      (threadId) => [threadId, (this.completedBy.get(threadId) ?? 0) + count] as const,
    );
    const deadline = Date.now() + timeoutMs;
    while (targets.some(([threadId, target]) => (this.completedBy.get(threadId) ?? 0) < target)) {
      if (Date.now() > deadline)
        throw new Error(
          `not every thread completed ${count} more turns; failures: ${this.failures.join('; ')}`,
        );
      await sleep(200);
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#loops);
  }
}

/** The worker host (`worker-N`) a `keel worker` process serves, by the data dir it was given. */
export async function hostOf(pid: number): Promise<string | undefined> {
  const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
  const dataDir = environ.split('\0').find((entry) => entry.startsWith('KEEL_DATA_DIR='));
  return dataDir === undefined ? undefined : path.basename(dataDir);
}

/** The pid in a worker identity (`pid@host`, the SDK's default). */
export const pidOf = (identity: string): number => Number(identity.split('@')[0]);

/**
 * The worker identity running the thread's pending activity of this type (started, not yet
 * finished), or undefined.
 */
export async function runningActivity(
  handle: WorkflowHandle,
  activity: 'callModel' | 'runTool',
): Promise<string | undefined> {
  const { raw } = await handle.describe();
  const pending = (raw.pendingActivities ?? []).find(
    (candidate) =>
      candidate.activityType?.name === activity &&
      candidate.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
  );
  return pending?.lastWorkerIdentity ?? undefined;
}

/** The worker identity that ran each finished activity of the thread, in order, by activity type. */
export async function activityIdentities(
  handle: WorkflowHandle,
): Promise<{ activity: string; identity: string }[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>();
  const found: { activity: string; identity: string }[] = [];
  for (const event of events) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes) scheduled.set(String(event.eventId), attributes.activityType?.name ?? '');
    const started = event.activityTaskStartedEventAttributes;
    if (started)
      found.push({
        activity: scheduled.get(String(started.scheduledEventId)) ?? '',
        identity: started.identity ?? '',
      });
  }
  return found;
}

/**
 * Keeps a SIGKILLed worker host down, as a machine that died stays down: the supervisor's
 * replacement process is stopped (SIGSTOP) as soon as it appears, before it can poll, so the
 * other host is the only one left. `release` lets it go on (SIGCONT).
 */
export function holdReplacement(
  cluster: Cluster,
  host: string,
  killed: number,
): { held: Promise<number>; release: () => Promise<void> } {
  let stopped: number | undefined;
  let giveUp = false;
  const held = (async () => {
    const deadline = Date.now() + 60_000;
    while (!giveUp && Date.now() < deadline) {
      for (const row of programs(cluster.process.pid!)) {
        if (row.pid === killed || !row.args.includes('keel.ts worker')) continue;
        if ((await hostOf(row.pid)) !== host) continue;
        process.kill(row.pid, 'SIGSTOP');
        stopped = row.pid;
        return row.pid;
      }
      await sleep(50);
    }
    throw new Error(`no replacement for ${host} appeared`);
  })();
  return {
    held,
    release: async () => {
      giveUp = true;
      await held.catch(() => undefined);
      if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
    },
  };
}

/**
 * Keeps a SIGKILLed Temporal service down for `ms`: its replacement (a program whose arguments
 * contain `matching`, not `killed`) is stopped (SIGSTOP) as soon as it appears and let go on
 * (SIGCONT) after `ms`, so the outage outlasts the heartbeat timeout. Resolves once let go.
 */
export async function holdServiceDown(
  cluster: Cluster,
  matching: string,
  killed: number,
  ms: number,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const replacement = programs(cluster.process.pid!).find(
      (row) => row.pid !== killed && row.args.includes(matching),
    );
    if (replacement !== undefined) {
      process.kill(replacement.pid, 'SIGSTOP');
      await sleep(ms);
      process.kill(replacement.pid, 'SIGCONT');
      return;
    }
    if (Date.now() > deadline) throw new Error(`no replacement for "${matching}" appeared`);
    await sleep(50);
  }
}

export interface ProbeAnswer {
  request: string;
  status: number;
  code: string | undefined;
  retryAfter: string | null;
  /** Whether PostgreSQL refused connections when the request was sent. */
  databaseDown: boolean;
}

/**
 * Requests through the API every 150 ms (reads, a search on visibility, a new thread) while a
 * disruption lasts, each noted with whether PostgreSQL took connections when it was sent.
 */
export class OutageProbe {
  readonly answers: ProbeAnswer[] = [];
  #stopping = false;
  readonly #inFlight = new Set<Promise<void>>();
  #loop: Promise<void> | undefined;

  constructor(
    readonly api: string,
    readonly threadId: string,
    readonly postgresPort: number,
  ) {}

  start(): void {
    const requests: [string, string, unknown?][] = [
      ['GET', `/threads/${this.threadId}`],
      ['GET', `/threads/${this.threadId}/state`],
      ['POST', '/threads/search', { limit: 1 }],
      ['POST', '/threads', undefined],
    ];
    this.#loop = (async () => {
      for (let index = 0; !this.#stopping; index++) {
        const [method, route, body] = requests[index % requests.length]!;
        const databaseDown = !(await accepts(this.postgresPort));
        const payload =
          route === '/threads' && method === 'POST' ? { thread_id: `probe-${randomUUID()}` } : body;
        const sent = this.#send(method, route, payload, databaseDown);
        this.#inFlight.add(sent);
        void sent.finally(() => this.#inFlight.delete(sent));
        await sleep(150);
      }
    })();
  }

  async #send(method: string, route: string, body: unknown, databaseDown: boolean): Promise<void> {
    const request = `${method} ${route.replace(/probe-[\w-]+|cluster-[\w-]+/, ':id')}`;
    try {
      const response = await fetch(`${this.api}${route}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(90_000),
      });
      const json = (await response.json().catch(() => ({}))) as { error?: { code?: string } };
      this.answers.push({
        request,
        status: response.status,
        code: json.error?.code,
        retryAfter: response.headers.get('retry-after'),
        databaseDown,
      });
    } catch (error) {
      this.answers.push({ request, status: 0, code: String(error), retryAfter: null, databaseDown });
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#loop;
    await Promise.all([...this.#inFlight]);
  }
}
