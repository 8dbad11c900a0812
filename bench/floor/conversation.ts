/**
 * The floor conversation's messages, shared by its workflow (bench/floor/workflows.ts) and the
 * client that drives it (bench/floor/turn-cost.ts).
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

export interface FloorConversationOptions {
  /** The two model calls of a turn as local activities, as Keel's with `KEEL_LOCAL_MODEL_CALLS=1`. */
  localModelCalls: boolean;
  /**
   * Keel's five search attributes written when a turn starts and again when it ends (the thread
   * busy, then idle with its cost), as Keel's turn writes them: two events a turn.
   */
  searchAttributes: boolean;
}

export interface FloorTurnInput {
  turn_id: string;
  /** What each step of the turn carries in and out (the model's messages, the tool's output). */
  payload: string;
}

/** A turn, answered when it ends: Keel's `submitInput` with `{ wait: true }`. */
export const floorTurnUpdate = defineUpdate<string, [FloorTurnInput]>('floorTurn');
/** Ends the conversation once its turns are answered. */
export const floorCloseSignal = defineSignal('floorClose');
