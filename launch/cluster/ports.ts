/**
 * Where the cluster listens, all on loopback. The services' ports follow from the frontend's the
 * way Temporal's own defaults do (frontend 7233, history 7234, matching 7235, worker 7239, their
 * membership ports 300 below, HTTP 7243), so `KEEL_TEMPORAL_PORT` moves the whole cluster.
 */
import { createServer } from 'node:net';

export const temporalServices = ['frontend', 'history', 'matching', 'worker'] as const;
export type TemporalService = (typeof temporalServices)[number];

const grpcOffset: Record<TemporalService, number> = { frontend: 0, history: 1, matching: 2, worker: 6 };
const membershipBelowGrpc = 300;
const httpOffset = 10;

export interface ClusterPorts {
  grpc: Record<TemporalService, number>;
  membership: Record<TemporalService, number>;
  frontendHttp: number;
  postgres: number;
  ui: number;
}

export function clusterPorts(frontend: number, postgres: number, ui: number): ClusterPorts {
  const each = (offset: (service: TemporalService) => number) =>
    Object.fromEntries(temporalServices.map((service) => [service, offset(service)])) as Record<
      TemporalService,
      number
    >;
  return {
    grpc: each((service) => frontend + grpcOffset[service]),
    membership: each((service) => frontend + grpcOffset[service] - membershipBelowGrpc),
    frontendHttp: frontend + httpOffset,
    postgres,
    ui,
  };
}

/** Temporal keeps membership ports in a PostgreSQL `smallint`: a service on a higher one dies at start. */
export const highestMembershipPort = 32_767;

/** Why these ports cannot work, or undefined. */
export function portsProblem(ports: ClusterPorts): string | undefined {
  const highest = Math.max(...Object.values(ports.membership));
  if (highest > highestMembershipPort)
    return `KEEL_TEMPORAL_PORT=${ports.grpc.frontend} puts a membership port at ${highest}, above ${highestMembershipPort} (Temporal stores it as a smallint): use a frontend port of ${highestMembershipPort + 300 - 6} or less`;
  if (Math.min(...Object.values(ports.membership)) < 1) return `KEEL_TEMPORAL_PORT must be above 300`;
  return undefined;
}

/**
 * Every port the cluster opens, as the start checks them. Not the worker service's gRPC port
 * (F + 6): Temporal's worker service is configured with one but never listens on it, so a port
 * taken there stops nothing (issue 36).
 */
export function allPorts(ports: ClusterPorts): number[] {
  return [
    ...temporalServices.filter((service) => service !== 'worker').map((service) => ports.grpc[service]),
    ...Object.values(ports.membership),
    ports.frontendHttp,
    ports.postgres,
    ports.ui,
  ];
}

async function isFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** The ports among `ports` something already listens on. */
export async function portsInUse(ports: number[]): Promise<number[]> {
  const taken: number[] = [];
  for (const port of ports) if (!(await isFree(port))) taken.push(port);
  return taken;
}
