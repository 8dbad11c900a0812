/**
 * The failure converter of every Keel client, worker and workflow bundle: a failure's message
 * and stack trace travel as an encoded payload, so the payload codec encrypts them like any
 * other content (Temporal otherwise stores both in plaintext). Workflow-safe: the bundle loads it.
 */
import {
  ApplicationFailure,
  DefaultFailureConverter,
  type PayloadConverter,
  type ProtoFailure,
  type SerializationContext,
} from '@temporalio/common';
import { FailureType } from './failures';

/**
 * Failures a query handler throws keep a plaintext message: the SDK's client hands a failed
 * query back as the server's gRPC message, never decoding the encoded attributes. Their messages
 * are Keel's own words and ids, no conversation content; the stack trace stays encoded.
 */
const plainMessageTypes: ReadonlySet<string> = new Set([FailureType.modelStepNotCurrent]);

class KeelFailureConverter extends DefaultFailureConverter {
  override errorToFailure(
    error: unknown,
    payloadConverter: PayloadConverter,
    context?: SerializationContext,
  ): ProtoFailure {
    const failure = super.errorToFailure(error, payloadConverter, context);
    if (error instanceof ApplicationFailure && plainMessageTypes.has(error.type ?? ''))
      failure.message = error.message;
    return failure;
  }
}

export const failureConverter = new KeelFailureConverter({ encodeCommonAttributes: true });
