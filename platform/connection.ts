/**
 * How a Keel process reaches Temporal: the options both the API's client and the worker's
 * connection are built from (TLS files are read here, once, by whoever launches the process).
 */
import { readFileSync } from 'node:fs';
import { temporalAddress, type KeelConfig } from './config';

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
