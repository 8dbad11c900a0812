/**
 * A retry that `@temporalio/client` scheduled before its connection closed: with the guard it
 * ends the caller's call as CANCELLED; without it, grpc-js would throw "Channel has been shut
 * down" from the retry's timer and take the process down (once in a full test run).
 */
import {
  Client as GrpcClient,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  status,
  type ServiceError,
} from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { closedConnectionGuard } from '../../api/gateway/grpc-closed-guard';

const path = '/keel.test.Down/Ping';
const bytes = (value: Buffer) => value;

describe('a retry after the Temporal connection closed', () => {
  let server: Server;
  let port: number;
  let calls = 0;
  let onCall: () => void = () => undefined;

  beforeAll(async () => {
    server = new Server();
    server.addService(
      {
        Ping: {
          path,
          requestStream: false,
          responseStream: false,
          requestSerialize: bytes,
          requestDeserialize: bytes,
          responseSerialize: bytes,
          responseDeserialize: bytes,
        },
      },
      {
        Ping: (_call: unknown, answer: (error: Partial<ServiceError>) => void) => {
          calls += 1;
          onCall();
          answer({ code: status.UNAVAILABLE, details: 'down for a moment' });
        },
      },
    );
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error === null ? resolve(bound) : reject(error),
      ),
    );
  });
  afterAll(() => server.forceShutdown());

  const ping = (client: GrpcClient) =>
    new Promise<ServiceError | null>((resolve) => {
      client.makeUnaryRequest(
        path,
        bytes,
        bytes,
        Buffer.from('ping'),
        new Metadata(),
        {
          interceptors: [
            makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3 })),
            closedConnectionGuard,
          ],
        },
        (failure) => resolve(failure),
      );
    });

  it('fails a call made after the close as CANCELLED, through the retry interceptor', async () => {
    const client = new GrpcClient(`127.0.0.1:${port}`, credentials.createInsecure());
    client.close();
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', listener);
    try {
      expect((await ping(client))?.code).toBe(status.CANCELLED);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', listener);
    }
  });

  it('ends the call as CANCELLED instead of throwing from a timer', async () => {
    calls = 0;
    const client = new GrpcClient(`127.0.0.1:${port}`, credentials.createInsecure());
    // The connection closes while the first answer (UNAVAILABLE, retryable) is on its way back.
    onCall = () => client.close();
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', listener);
    try {
      const error = await ping(client);
      expect(error?.code).toBe(status.CANCELLED);
      expect(calls).toBe(1);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', listener);
    }
  });
});
