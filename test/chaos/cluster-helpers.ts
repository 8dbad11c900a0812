/**
 * What the cluster test drives: `keel up --cluster` as a child process, its process tree, free
 * ports for a whole cluster, and conversations chatting through an API until told to stop.
 */
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { allPorts, clusterPorts, portsInUse } from '../../launch/cluster/ports';
import { freePort } from '../helpers/api';
import { type KeelUp, keelUp } from '../helpers/keel-up';
import { awaitRunEnd, IntakeLedger, submitUntilAccepted } from './api-chat';

export type Cluster = KeelUp;

export const keelUpCluster = (env: Record<string, string>): Cluster => keelUp(['--cluster'], env);

/** Every process below `pid`, with its command line. */
export function descendants(pid: number): { pid: number; args: string }[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [, child, parent, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
      return { pid: Number(child), parent: Number(parent), args: args ?? '' };
    });
  const found: { pid: number; args: string }[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const row of table.filter((candidate) => candidate.parent === parent)) {
      found.push({ pid: row.pid, args: row.args });
      queue.push(row.pid);
    }
  }
  return found;
}

export function childPid(cluster: Cluster, matching: string): number {
  const found = descendants(cluster.process.pid!).find((row) => row.args.includes(matching));
  if (found === undefined) throw new Error(`no process "${matching}" under the cluster`);
  return found.pid;
}

/** A free frontend port with the ports the other services take above and below it. */
export async function freeClusterPorts(): Promise<Record<string, string>> {
  for (;;) {
    // Membership ports (300 below) must fit Temporal's smallint column.
    const frontend = 10_000 + Math.floor(Math.random() * 22_000);
    const [postgres, ui, api] = [await freePort(), await freePort(), await freePort()];
    if ((await portsInUse(allPorts(clusterPorts(frontend, postgres, ui)))).length === 0)
      return {
        KEEL_TEMPORAL_PORT: String(frontend),
        KEEL_POSTGRES_PORT: String(postgres),
        KEEL_TEMPORAL_UI_PORT: String(ui),
        KEEL_API_PORT: String(api),
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
