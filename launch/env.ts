/**
 * The process environment, read in one place: configuration and loggers for every Keel process.
 * `api/` and `worker/` receive these as arguments; only `launch/` and `cli/` read the environment.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { ConfigError, parseConfig, type KeelConfig } from '../platform/config';
import { traceIds } from '../telemetry/tracing';

export { ConfigError };
export type { Logger };

/** Parses `process.env` once, frozen; a bad value ends the process with one clear line. */
export function loadConfig(): Readonly<KeelConfig> {
  return Object.freeze(parseConfig(process.env, process.cwd()));
}

/**
 * A process's logger. Lines logged while a span records carry `trace_id` and `span_id`. Errors are serialized with their message and causes under `err` and under
 * `error` (the key Temporal's own log lines use): plain JSON turns an Error into `{}`.
 */
export function createLogger(
  config: Pick<KeelConfig, 'log'>,
  name: string,
  destination?: pino.DestinationStream,
): Logger {
  const serializers = { err: pino.stdSerializers.errWithCause, error: pino.stdSerializers.errWithCause };
  // A line logged inside a recording span carries its trace_id and span_id.
  const options = { name, level: config.log.level, serializers, mixin: traceIds };
  if (config.log.format === 'json')
    // Synchronous, as pino-pretty's below: pino flushes an asynchronous stdout in an exit
    // handler, and sonic-boom's synchronous flush retries a closed pipe (EPIPE) forever, so a
    // process whose reader had gone (`tee`, `keel up`) hung in `process.exit` and ignored every
    // later signal (decision 0330). Synchronously, EPIPE silences the logger instead.
    return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
  return pino(
    options,
    pretty({ sync: true, colorize: process.stdout.isTTY, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' }),
  );
}

/** The environment for a child Keel process: this one's, plus the given overrides. */
export function childProcessEnvironment(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...overrides };
}
