import { Metadata, status } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { workflowIdFor } from '../../common/thread';
import { fromTemporal } from '../../api/errors';
import { isToolsUnsupported, mapHttpFailure } from '../../activities/model/http-errors';

const grpcError = (code: status, details: string) =>
  Object.assign(new Error(details), { code, details, metadata: new Metadata() });

describe('errors are told apart by type, not by their text', () => {
  it('answers 503 for an unavailable Temporal, bare or wrapped by the SDK', () => {
    const bare = grpcError(status.UNAVAILABLE, 'connect failed');
    const wrapped = new ServiceError('call failed', { cause: grpcError(status.DEADLINE_EXCEEDED, 'late') });
    expect(fromTemporal(bare)?.status).toBe(503);
    expect(fromTemporal(wrapped)?.status).toBe(503);
  });

  it('answers 404 for a closed or missing thread, as the SDK types it', () => {
    const error = new WorkflowNotFoundError(
      'workflow execution already completed',
      workflowIdFor('t1'),
      undefined,
    );
    expect(fromTemporal(error)?.body()).toMatchObject({ error: { code: 'thread_not_found' } });
  });

  it('leaves a gRPC error it has no type for to the 500 handler, whatever its text says', () => {
    const wrapped = new ServiceError('call failed', {
      cause: grpcError(status.FAILED_PRECONDITION, 'workflow is closed'),
    });
    expect(fromTemporal(wrapped)).toBeUndefined();
  });

  it('marks a request refused for its tools by a detail, not by the message the caller reads', () => {
    const label = { name: 'Ollama', keyHint: 'OLLAMA_HOST' };
    const refused = mapHttpFailure(
      label,
      400,
      'registry.ollama.ai/library/gemma does not support tools',
      undefined,
    );
    const other = mapHttpFailure(label, 400, 'model "nope" not found', undefined);
    expect(refused.type).toBe('ModelRequestInvalid');
    expect(isToolsUnsupported(refused)).toBe(true);
    expect(isToolsUnsupported(other)).toBe(false);
    const sameText = ApplicationFailure.create({ type: 'ModelRequestInvalid', message: refused.message });
    expect(isToolsUnsupported(sameText)).toBe(false);
  });
});
