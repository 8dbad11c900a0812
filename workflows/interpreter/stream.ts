/**
 * The conversation's durable event log: a `WorkflowStream` read and written through its public
 * API only, and kept bounded when it is carried across continue-as-new.
 */
import { WorkflowStream, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { eventsTopic, type KeelEvent } from '../../common/events';
import { limits } from '../../common/limits';

/** Bytes of encoded events carried over; older events are truncated (a cursor before them gets 410). */
const carriedStreamBytes = 512 * 1024;

export class EventLog {
  readonly #stream: WorkflowStream;
  /** The oldest offset the log holds: set by the carried state, since this run never truncates. */
  readonly baseOffset: number;

  constructor(carried: WorkflowStreamState | undefined) {
    this.#stream = new WorkflowStream(carried);
    this.baseOffset = carried?.base_offset ?? 0;
  }

  publish(event: KeelEvent): void {
    this.#stream.topic<KeelEvent>(eventsTopic).publish(event);
  }

  /**
   * The offset the next published event gets. Activities publish into the log too (token deltas,
   * by signal), so the log's own length is asked: a copy, made once per run that starts.
   */
  nextOffset(): number {
    const state = this.#stream.getState();
    return state.base_offset + state.log.length;
  }

  /** Releases waiting subscribers, who would otherwise hold the workflow open. */
  detachPollers(): void {
    this.#stream.detachPollers();
  }

  /** The log to carry across continue-as-new: the newest events, within the limits. */
  carriedState(): WorkflowStreamState {
    const state = this.#stream.getState();
    let keep = 0;
    let bytes = 0;
    for (let index = state.log.length - 1; index >= 0 && keep < limits.streamEventsKept; index--) {
      bytes += state.log[index]!.data.length;
      if (bytes > carriedStreamBytes) break;
      keep++;
    }
    const drop = state.log.length - keep;
    if (drop === 0) return state;
    return { ...state, log: state.log.slice(drop), base_offset: state.base_offset + drop };
  }
}
