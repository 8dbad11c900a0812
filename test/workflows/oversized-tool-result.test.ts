/**
 * A thread whose history already holds a tool result that no worker will inflate (an older
 * worker's 300 MB read, compressed under Temporal's limit) is not bricked: the codec reads it as a
 * fixed placeholder, the workflow turns that into an error result saying the output was too
 * large, the thread answers its next message, and its history replays to the same result.
 */
import { randomUUID } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { AesGcmCodec } from '../../codec/aes-gcm-codec';
import { maxInflatedBytes, zlibEncoding } from '../../codec/zlib-codec';
import { workflowIdFor } from '../../common/thread';
import { TestConversation, toolResults } from '../helpers/conversation';
import { testDataConverter } from '../helpers/encryption';
import { oversizedToolResult } from '../helpers/oversized-payload';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(120_000);

const marker = `stands-for-300-MB-${randomUUID()}`;
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** Between compression and encryption, stores the marked result as the older worker did. */
class AsAnOlderWorkerStored implements PayloadCodec {
  constructor(readonly stored: () => Payload) {}
  encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(
      payloads.map((payload) => (text(payload.data).includes(marker) ? this.stored() : payload)),
    );
  }
  decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads);
  }
}

/** Every payload of a history event, depth first. */
function payloadsOf(value: unknown, found: Payload[] = []): Payload[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return found;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && 'metadata' in record) found.push(record);
  else for (const child of Object.values(record)) payloadsOf(child, found);
  return found;
}

describe('a history holding a tool result too large to read back', () => {
  let stored: Payload;
  beforeAll(async () => {
    stored = await oversizedToolResult();
  });
  const setup = workerHarness(() => ({}), {
    activities: (real) => ({
      ...real,
      runTool: (input) =>
        input.name === 'read_file' && input.input.path === 'huge.txt'
          ? Promise.resolve({ is_error: false, content: marker })
          : real.runTool(input),
    }),
    dataConverter: (real) => {
      const [zlib, aes] = real.payloadCodecs ?? [];
      return { ...real, payloadCodecs: [zlib!, new AsAnOlderWorkerStored(() => stored), aes!] };
    },
  });

  it('answers with an error result saying the output was too large, goes on, and replays the same', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config);
    const run = await conversation.ask('read: huge.txt');
    expect(run.status).toBe('completed');
    const [result] = toolResults(await conversation.transcript());
    expect(result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(
        /^\[Keel dropped this tool output: stored compressed in \d+ bytes, it expands past/,
      ),
    });
    expect(JSON.stringify(result)).not.toContain('keel_dropped_payload');
    expect((await conversation.ask('still there?')).status).toBe('completed');

    // The history really holds the payload, and the old decode refuses it.
    const workflowId = workflowIdFor(conversation.threadId);
    const history = await setup.client.workflow.getHandle(workflowId).fetchHistory();
    const aes = testDataConverter().payloadCodecs!.find((codec) => codec instanceof AesGcmCodec)!;
    const results = await aes.decode(
      history.events!.flatMap((event) => payloadsOf(event.activityTaskCompletedEventAttributes?.result)),
    );
    const compressed = results.find((payload) => text(payload.metadata!.encoding) === zlibEncoding);
    expect(compressed).toBeDefined();
    expect(compressed!.data!.length).toBeLessThan(2 * 1024 * 1024);
    expect(() => inflateSync(compressed!.data!, { maxOutputLength: maxInflatedBytes })).toThrow(
      /Cannot create a Buffer larger than/,
    );

    // A worker replaying it (after a restart, an eviction) reaches the same result every time.
    for (let attempt = 0; attempt < 2; attempt++)
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.KEEL_TEST_BUNDLE! }, dataConverter: testDataConverter() },
        history,
        workflowId,
      );
  });
});
