/**
 * What workflows tell the worker's metrics, through a Temporal sink: the worker records it in
 * Node, outside the sandbox, and the SDK does not call sinks while a workflow replays, so a run
 * is counted once however often its history is replayed.
 */
import type { Sinks } from '@temporalio/workflow';

export interface RunEndedObservation {
  status: 'completed' | 'failed' | 'cancelled';
  status_reason: string;
  /** Started to ended (queued time left out), in milliseconds of workflow time. */
  duration_ms: number;
  /**
   * Refused before it started (a thread's rules, or its owner's quota at a workflow's door, which
   * counted the refusal there): not counted again among the refusals.
   */
  refused?: true;
}

export interface ApprovalResolvedObservation {
  decision: 'approve' | 'deny' | 'timeout';
  /** Requested to resolved, in milliseconds of workflow time. */
  wait_ms: number;
}

export interface KeelSinks extends Sinks {
  keelMetrics: {
    runEnded(observation: RunEndedObservation): void;
    approvalResolved(observation: ApprovalResolvedObservation): void;
  };
}
