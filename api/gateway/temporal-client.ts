/**
 * The API's Temporal client. A caller is waiting, so an unreachable Temporal is reported (503)
 * after ~1.5 s of retries instead of the client default's ~20 s; workers keep the default.
 */
import { Client, Connection, defaultGrpcRetryOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { TemporalConnectionOptions } from '../../platform/connection';
import { guardedInterceptors } from './grpc-closed-guard';

export const apiRetryAttempts = 4;

export function apiConnectionOptions(options: TemporalConnectionOptions) {
  return {
    ...options,
    interceptors: guardedInterceptors(defaultGrpcRetryOptions({ maxAttempts: apiRetryAttempts })),
  };
}

export async function connectApiClient(
  options: TemporalConnectionOptions,
  namespace: string,
  dataConverter: DataConverter,
): Promise<Client> {
  const connection = await Connection.connect(apiConnectionOptions(options));
  // Updates, signals and starts carry the request's trace context to the workflow (a no-op
  // when tracing is off).
  return new Client({
    connection,
    namespace,
    dataConverter,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
}
