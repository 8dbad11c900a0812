/**
 * 9. Codec: what encryption at rest costs per step. Real conversations (tool turns through the
 * API, scripted model) are run; their stored histories are read back; every payload in them is
 * decrypted and encrypted again with the system's own codec, timed. Each stored payload is
 * encrypted once by whoever wrote it and decrypted at least once by whoever reads it, so one
 * decrypt plus one encrypt of a step's payloads is the codec's CPU per step (more when a
 * worker without a cache replays the history, which decrypts it again).
 */
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../../common/thread';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';
import type { System } from '../harness';

export interface CodecOptions {
  threads: number;
  turns: number;
  trials: number;
}

const EventType = temporal.api.enums.v1.EventType;

/**
 * Every payload of a raw history, apart from search attributes (indexed, never encoded), patch
 * markers and the trace context header (never passed through the codec).
 */
function payloadsIn(value: unknown, found: Payload[] = []): Payload[] {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return found;
  const record = value as Record<string, unknown>;
  if ('metadata' in record && record.data instanceof Uint8Array) found.push(record);
  else
    for (const [name, child] of Object.entries(record))
      if (name !== 'searchAttributes' && name !== 'markerRecordedEventAttributes' && name !== '_tracer-data')
        payloadsIn(child, found);
  return found;
}

async function post(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
}

export async function codecCost(system: System, options: CodecOptions): Promise<ScenarioResult> {
  const codecs = system.client.options.loadedDataConverter.payloadCodecs;
  const stored: Payload[] = [];
  let steps = 0;
  for (let thread = 0; thread < options.threads; thread++) {
    const threadId = `codec-${Date.now()}-${thread}`;
    await post(`${system.apiUrl}/threads`, { thread_id: threadId });
    for (let turn = 0; turn < options.turns; turn++) {
      await post(`${system.apiUrl}/threads/${threadId}/runs/wait`, {
        input: { messages: [{ role: 'user', content: `run: echo turn ${turn} of thread ${thread}` }] },
      });
    }
    const history = await system.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();
    const events = history.events ?? [];
    steps += events.filter(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
    ).length;
    stored.push(...payloadsIn(events));
    progress.count('threads', thread + 1, options.threads);
  }
  const bytes = stored.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
  const perStepUs: number[] = [];
  // The first pass warms the cipher and the protobuf code up; it is not timed.
  for (let trial = -1; trial < options.trials * 5; trial++) {
    const started = process.hrtime.bigint();
    let payloads = stored;
    for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
    for (const codec of codecs) payloads = await codec.encode(payloads);
    if (trial >= 0) perStepUs.push(Number(process.hrtime.bigint() - started) / 1e3 / steps);
  }
  const perStep = spread(perStepUs);
  return {
    rows: [
      {
        scenario: '9 codec',
        metric: 'AES-256-GCM, decrypt + encrypt of one step’s payloads, µs',
        value: showSpread(perStep, 1),
        note: `${steps} model steps, ${stored.length} payloads`,
      },
      {
        scenario: '',
        metric: '  stored payload bytes per step',
        value: (bytes / steps).toFixed(0),
      },
    ],
    data: { per_step_us: perStep, steps, payloads: stored.length, bytes, ...options },
  };
}
