/**
 * A gRPC interceptor for the Temporal client that turns a call made on a closed connection into
 * a CANCELLED status. `@temporalio/client`'s retry interceptor schedules each retry on a timer
 * that `Connection.close()` does not clear; when one fires after the close, grpc-js throws
 * "Channel has been shut down" inside that timer, out of every caller's reach, and the process
 * dies. Placed after the retry interceptor, this one is where the retry's new call is made, so
 * the error becomes the call's status and reaches the caller that is still awaiting it.
 */
import { InterceptingCall, Metadata, status, type Interceptor, type StatusObject } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions } from '@temporalio/client';

const closedMessage = 'Channel has been shut down';

/** A call that never reaches the network: it ends as CANCELLED as soon as it is started. */
function cancelledCall(): InterceptingCall {
  const nowhere = {
    cancelWithStatus() {},
    getPeer: () => '',
    start() {},
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {},
    getAuthContext: () => null,
  };
  return new InterceptingCall(nowhere, {
    start(_metadata, listener) {
      const ended: StatusObject = {
        code: status.CANCELLED,
        details: 'the Temporal connection was closed before this call was retried',
        metadata: new Metadata(),
      };
      queueMicrotask(() => {
        // No message, but the retry interceptor forwards its saved message (and the callback it
        // was given with it) before any final status: without one it would throw.
        listener.onReceiveMessage(undefined);
        listener.onReceiveStatus(ended);
      });
    },
    sendMessage() {},
    halfClose() {},
    cancel() {},
  });
}

/**
 * The client's interceptors with the guard innermost: the SDK's retries (its default options
 * unless given) and then the guard. For every `Connection` Keel or its tests open.
 */
export function guardedInterceptors(retry: GrpcRetryOptions = defaultGrpcRetryOptions()): Interceptor[] {
  return [makeGrpcRetryInterceptor(retry), closedConnectionGuard];
}

export const closedConnectionGuard: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (error) {
    if (error instanceof Error && error.message === closedMessage) return cancelledCall();
    throw error;
  }
};
