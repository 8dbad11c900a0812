/**
 * Loaded into a process with `--import` (after tsx): counts the gRPC methods the process calls
 * through grpc-js (the Temporal client's transport) and writes them, as JSON, to
 * `KEEL_BENCH_GRPC_CALLS_FILE` every second. For `bench/throughput-cpu.ts`.
 */
import { writeFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

const counts: Record<string, number> = {};
const file = process.env.KEEL_BENCH_GRPC_CALLS_FILE;
const prototype = grpc.Client.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const original = prototype.makeUnaryRequest!;
prototype.makeUnaryRequest = function (this: unknown, method: unknown, ...rest: unknown[]) {
  const name = String(method).split('/').pop()!;
  counts[name] = (counts[name] ?? 0) + 1;
  return original.call(this, method, ...rest);
};
if (file !== undefined) setInterval(() => writeFileSync(file, JSON.stringify(counts)), 1_000).unref();
