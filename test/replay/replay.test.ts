/**
 * Recorded histories (test/replay/histories/, from `npm run record-histories`) replayed against
 * the current workflow bundle: a change that would break a running conversation fails here with
 * a determinism error, before it reaches a deployed worker.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadHistory } from './load-history';
import { Worker } from '@temporalio/worker';

const directory = path.join(__dirname, 'histories');
/**
 * Histories written by older workflow code, kept while a `patched()` branch still serves them
 * (docs/replay-and-patching.md): the code must replay both its own and these.
 */
const olderDirectories = ['before-cost-patch'];
const scenarios = [
  'continue-as-new.json',
  'crash-recovered-turn.json',
  'parallel-tools.json',
  'plain-turn.json',
];

async function historyFiles(): Promise<string[]> {
  const current = (await readdir(directory)).filter((file) => file.endsWith('.json'));
  const older = await Promise.all(
    olderDirectories.map(async (folder) =>
      (await readdir(path.join(directory, folder))).map((file) => path.join(folder, file)),
    ),
  );
  return [...current, ...older.flat()];
}

describe('recorded histories', () => {
  it('include a plain turn, parallel tools, a crash-recovered turn and a continue-as-new, from this code and older', async () => {
    expect((await readdir(directory)).filter((file) => file.endsWith('.json')).sort()).toEqual(scenarios);
    for (const folder of olderDirectories) {
      expect((await readdir(path.join(directory, folder))).sort()).toEqual(scenarios);
    }
  });

  it('replay against the current workflow bundle without a determinism error', async () => {
    const files = await historyFiles();
    const histories = await Promise.all(
      files.map(async (file) => ({
        workflowId: file.replace(/\.json$/, ''),
        history: loadHistory(JSON.parse(await readFile(path.join(directory, file), 'utf8'))),
      })),
    );
    const results: string[] = [];
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: { codePath: process.env.KEEL_TEST_BUNDLE! } },
      histories,
    )) {
      if (result.error !== undefined) results.push(`${result.workflowId}: ${String(result.error)}`);
      else results.push(`${result.workflowId}: ok`);
    }
    expect(results.sort()).toEqual(files.map((file) => `${file.replace(/\.json$/, '')}: ok`).sort());
  });
});
