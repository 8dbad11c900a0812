/**
 * Recorded histories (test/replay/histories/, from `npm run record-histories`) replayed against
 * the current workflow bundle: a change that would break a running conversation fails here with
 * a determinism error, before it reaches a deployed worker. The current ones were recorded
 * encrypted with the test key and replay through the codec; older ones are plaintext, as stored
 * before encryption, and replay through the same codec untouched.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadHistory } from './load-history';
import { Worker } from '@temporalio/worker';
import { testDataConverter } from '../helpers/encryption';

const directory = path.join(__dirname, 'histories');
const scenarios = [
  'continue-as-new.json',
  'crash-recovered-turn.json',
  'parallel-tools.json',
  'plain-turn.json',
];
/**
 * Recorded since agents started from other workflows (workflows/agents/): `agent-parent` is the
 * workflow Keel's Nexus operation starts, which starts an agent from earlier messages and awaits
 * it; `task-conversation` is that agent, a task conversation with a tool call in between.
 */
const agentScenarios = ['agent-parent.json', 'task-conversation.json'];
/** Recorded since a waited run's model calls are local activities (decision 0200): two turns. */
const laterScenarios = [...agentScenarios, 'waited-turn.json'];
/**
 * Histories written by older workflow code, kept while a `patched()` branch still serves them
 * (docs/replay-and-patching.md): the code must replay both its own and these, each folder's
 * scenarios. `before-tracing`: recorded before the tracing interceptors (patch
 * `keel-otel-interceptors`, decision 0122). `before-lean-history`: every scenario as recorded
 * before the patch `keel-lean-history` (one marker for all patches, fewer visibility writes;
 * decision 0220), each with a marker per patch. `before-tracing-per-worker`: every scenario as
 * recorded before the patch `keel-tracing-per-worker` (decision 0290), traced on every worker by
 * Temporal's interceptors. The current ones were recorded on a worker that traces; this replayer
 * does not.
 */
const olderDirectories: Record<string, string[]> = {
  'before-tracing-per-worker': [...scenarios, ...laterScenarios],
  'before-lean-history': [...scenarios, ...laterScenarios],
  'before-tracing': scenarios,
  'before-cost-patch': scenarios,
  plaintext: scenarios,
};

/**
 * Each history runs under its file's name as workflow id, without the folder: the id it was
 * recorded under (an agent's thread id derives from its parent's id).
 */
async function loadHistories(files: string[]) {
  return Promise.all(
    files.map(async (file) => ({
      workflowId: path.basename(file, '.json'),
      history: loadHistory(JSON.parse(await readFile(path.join(directory, file), 'utf8'))),
    })),
  );
}

/** `<file without .json>: ok` or the error, per file; the replayer answers in the order given. */
async function replay(files: string[], dataConverter = testDataConverter()): Promise<string[]> {
  const results: string[] = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: process.env.KEEL_TEST_BUNDLE! }, dataConverter },
    await loadHistories(files),
  )) {
    const name = files[results.length]!.replace(/\.json$/, '');
    results.push(`${name}: ${result.error === undefined ? 'ok' : String(result.error)}`);
  }
  return results.sort();
}

/**
 * Encodings of a history's payloads, apart from search attributes, the SDK's markers' own metadata and
 * the trace context header (`_tracer-data`: a W3C traceparent, ids only, which Temporal does not
 * pass through the codec; decision 0122).
 */
function contentEncodings(value: unknown, out = new Set<string>()): Set<string> {
  if (value === null || typeof value !== 'object') return out;
  const record = value as Record<string, unknown>;
  const metadata = record.metadata as Record<string, string> | undefined;
  if (metadata?.encoding !== undefined) out.add(Buffer.from(metadata.encoding, 'base64').toString('utf8'));
  else
    for (const [name, child] of Object.entries(record)) {
      // A local activity's marker holds its result (content, so encrypted) beside the SDK's own
      // plain metadata (`data`: ids, type, times); patch markers hold only the patch's name.
      if (name === 'markerRecordedEventAttributes') {
        const marker = child as { markerName?: string; details?: Record<string, unknown> };
        if (marker.markerName === 'core_local_activity') contentEncodings(marker.details?.result, out);
      } else if (name !== 'searchAttributes' && name !== '_tracer-data') contentEncodings(child, out);
    }
  return out;
}

async function historyFiles(): Promise<string[]> {
  const current = (await readdir(directory)).filter((file) => file.endsWith('.json'));
  const older = await Promise.all(
    Object.keys(olderDirectories).map(async (folder) =>
      (await readdir(path.join(directory, folder))).map((file) => path.join(folder, file)),
    ),
  );
  return [...current, ...older.flat()];
}

describe('recorded histories', () => {
  it('include a plain turn, parallel tools, a crash-recovered turn and a continue-as-new, from this code and older, and an agent with its parent', async () => {
    expect((await readdir(directory)).filter((file) => file.endsWith('.json')).sort()).toEqual(
      [...laterScenarios, ...scenarios].sort(),
    );
    for (const [folder, files] of Object.entries(olderDirectories)) {
      expect((await readdir(path.join(directory, folder))).sort()).toEqual([...files].sort());
    }
  });

  it('replay against the current workflow bundle without a determinism error', async () => {
    const files = await historyFiles();
    expect(await replay(files)).toEqual(files.map((file) => `${file.replace(/\.json$/, '')}: ok`).sort());
  });

  it('store the current histories encrypted, the older ones in plaintext', async () => {
    for (const file of [...scenarios, ...laterScenarios]) {
      const json: unknown = JSON.parse(await readFile(path.join(directory, file), 'utf8'));
      expect([file, [...contentEncodings(json)]]).toEqual([file, ['binary/encrypted']]);
      if (!scenarios.includes(file)) continue;
      const older: unknown = JSON.parse(await readFile(path.join(directory, 'plaintext', file), 'utf8'));
      expect([file, [...contentEncodings(older)]]).toEqual([file, ['json/plain']]);
    }
  });

  it('fail to replay with another key: they really are encrypted', async () => {
    const other = `test-1:${Buffer.alloc(32, 7).toString('base64')}`;
    // The failure itself is encrypted (with the other key), so the replayer shows it encoded.
    expect(await replay(['plain-turn.json'], testDataConverter(other))).toEqual([
      expect.stringMatching(/^plain-turn: ReplayError: .*Encoded failure/),
    ]);
  });
});
