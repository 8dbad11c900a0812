/**
 * The conversation's durable event log: a `WorkflowStream` read and written through its public
 * API only, and kept bounded when it is carried across continue-as-new.
 */
import { setHandler } from '@temporalio/workflow';
import {
  decodePayloadWire,
  WorkflowStream,
  workflowStreamPublishSignal,
  type PublishInput,
  type WorkflowStreamState,
} from '@temporalio/workflow-streams/workflow';
import { eventsTopic, type KeelEvent } from '../../common/events';
import { limits } from '../../common/limits';

/** Bytes of encoded events carried over; older events are truncated (a cursor before them gets 410). */
const carriedStreamBytes = 512 * 1024;

/** How long a publisher's last sequence is carried after it was last seen: `getState`'s default. */
const publisherTtlSeconds = 15 * 60;

/** Longer than any workflow's age: a snapshot that prunes no publisher. */
const keepEveryPublisher = Number.MAX_SAFE_INTEGER;

export class EventLog {
  readonly #stream: WorkflowStream;
  /** The oldest offset the log holds: set by the carried state, since this run never truncates. */
  readonly baseOffset: number;
  /** The offset the next event gets: counted as events are appended (see the publish handler). */
  #nextOffset: number;
  /** Per publisher, the last sequence taken and when (seconds): the stream's own dedup, kept here. */
  readonly #sequences: Record<string, number>;
  readonly #lastSeen: Record<string, number>;

  constructor(carried: WorkflowStreamState | undefined) {
    this.#stream = new WorkflowStream(carried);
    this.baseOffset = carried?.base_offset ?? 0;
    // Once per run: the log as constructed, with any publish that was buffered before it.
    const start = this.#stream.getState(keepEveryPublisher);
    this.#nextOffset = start.base_offset + start.log.length;
    this.#sequences = { ...start.publisher_sequences };
    this.#lastSeen = { ...start.publisher_last_seen };
    // Activities publish into the log by signal (token deltas). Taken here rather than by the
    // stream's own handler so the log's length is known without copying it: the same dedup by
    // publisher and sequence, the same entries, appended through the stream's public topic API.
    setHandler(workflowStreamPublishSignal, (input) => this.#onPublish(input));
  }

  publish(event: KeelEvent): void {
    this.#stream.topic<KeelEvent>(eventsTopic).publish(event);
    this.#nextOffset++;
  }

  /** The offset the next published event gets. */
  nextOffset(): number {
    return this.#nextOffset;
  }

  /** Releases waiting subscribers, who would otherwise hold the workflow open. */
  detachPollers(): void {
    this.#stream.detachPollers();
  }

  /** The log to carry across continue-as-new: the newest events, within the limits. */
  carriedState(): WorkflowStreamState {
    const state = { ...this.#stream.getState(), ...this.#publishers() };
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

  /** As `WorkflowStream`'s handler does it: a sequence already taken from a publisher is skipped. */
  #onPublish(input: PublishInput): void {
    if (input.publisher_id) {
      if (input.sequence <= (this.#sequences[input.publisher_id] ?? 0)) return;
      this.#sequences[input.publisher_id] = input.sequence;
      this.#lastSeen[input.publisher_id] = Date.now() / 1000;
    }
    for (const entry of input.items) {
      this.#stream.topic(entry.topic).publish(decodePayloadWire(entry.data));
      this.#nextOffset++;
    }
  }

  /** The publishers to carry: those seen within the TTL, as `getState` prunes them. */
  #publishers(): Pick<WorkflowStreamState, 'publisher_sequences' | 'publisher_last_seen'> {
    const now = Date.now() / 1000;
    const publisher_sequences: Record<string, number> = {};
    const publisher_last_seen: Record<string, number> = {};
    for (const [id, sequence] of Object.entries(this.#sequences)) {
      const seen = this.#lastSeen[id] ?? 0;
      if (now - seen >= publisherTtlSeconds) continue;
      publisher_sequences[id] = sequence;
      publisher_last_seen[id] = seen;
    }
    return { publisher_sequences, publisher_last_seen };
  }
}
