/**
 * The process environment, read in one place: configuration, Temporal connection options and
 * loggers for every Keel process. Everything below `cli/` receives these as arguments.
 */
import { readFileSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { ConfigError, parseConfig, temporalAddress, type KeelConfig } from '../common/config';

export { ConfigError };
export type { Logger };

/** Parses `process.env` once, frozen; a bad value ends the process with one clear line. */
export function loadConfig(): Readonly<KeelConfig> {
  return Object.freeze(parseConfig(process.env, process.cwd()));
}

export interface TemporalConnectionOptions {
  address: string;
  tls?: {
    clientCertPair?: { crt: Buffer; key: Buffer };
    serverRootCACertificate?: Buffer;
    serverNameOverride?: string;
  };
  apiKey?: string;
}

/** Connection options for the client and the worker alike: TLS files are read here. */
export function temporalConnectionOptions(config: KeelConfig): TemporalConnectionOptions {
  const { tls, apiKey } = config.temporal;
  const options: TemporalConnectionOptions = { address: temporalAddress(config) };
  if (tls !== undefined) {
    options.tls = {
      ...(tls.cert !== undefined && tls.key !== undefined
        ? { clientCertPair: { crt: readFileSync(tls.cert), key: readFileSync(tls.key) } }
        : {}),
      ...(tls.ca === undefined ? {} : { serverRootCACertificate: readFileSync(tls.ca) }),
      ...(tls.serverName === undefined ? {} : { serverNameOverride: tls.serverName }),
    };
  } else if (apiKey !== undefined) {
    // Temporal Cloud's API keys travel over TLS.
    options.tls = {};
  }
  if (apiKey !== undefined) options.apiKey = apiKey;
  return options;
}

/**
 * A process's logger. Errors are serialized with their message and causes under `err` and under
 * `error` (the key Temporal's own log lines use): plain JSON turns an Error into `{}`.
 */
export function createLogger(
  config: Pick<KeelConfig, 'log'>,
  name: string,
  destination?: pino.DestinationStream,
): Logger {
  const serializers = { err: pino.stdSerializers.errWithCause, error: pino.stdSerializers.errWithCause };
  const options = { name, level: config.log.level, serializers };
  if (config.log.format === 'json')
    return destination === undefined ? pino(options) : pino(options, destination);
  return pino(
    options,
    pretty({ sync: true, colorize: process.stdout.isTTY, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' }),
  );
}

/** The environment for a child Keel process: this one's, plus the given overrides. */
export function childProcessEnvironment(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...overrides };
}
