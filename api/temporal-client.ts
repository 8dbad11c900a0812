/**
 * The API's Temporal client. A caller is waiting, so an unreachable Temporal is reported (503)
 * after ~1.5 s of retries instead of the client default's ~20 s; workers keep the default.
 */
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { TemporalConnectionOptions } from '../launch/connection';
import { closedConnectionGuard } from './grpc-closed-guard';

export const apiRetryAttempts = 4;

export function apiConnectionOptions(options: TemporalConnectionOptions) {
  return {
    ...options,
    interceptors: [
      makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: apiRetryAttempts })),
      closedConnectionGuard,
    ],
  };
}

export async function connectApiClient(
  options: TemporalConnectionOptions,
  namespace: string,
  dataConverter: DataConverter,
): Promise<Client> {
  const connection = await Connection.connect(apiConnectionOptions(options));
  return new Client({ connection, namespace, dataConverter });
}
