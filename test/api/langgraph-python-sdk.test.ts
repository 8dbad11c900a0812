/** Contract smoke test: LangGraph's Python SDK (`langgraph-sdk` from PyPI), unmodified, against Keel. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { apiHarness } from '../helpers/api';
import { ensurePythonSdk, hasPython } from '../helpers/python-sdk';

jest.setTimeout(300_000);

const script = path.join(__dirname, '..', 'python', 'langgraph_sdk_smoke.py');

(hasPython ? describe : describe.skip)("LangGraph's Python SDK against Keel", () => {
  const harness = apiHarness();
  let python: string;
  beforeAll(async () => {
    python = await ensurePythonSdk();
  }, 300_000);

  it('finds the assistant and the thread, waits, streams a tool turn, reads state and history, resumes an interrupt, patches, copies, runs statelessly, makes a cron, takes a graph input without messages and a bare model name, joins a run in its own modes, pages every list', async () => {
    const { stdout } = await promisify(execFile)(python, [script, harness.base], { timeout: 120_000 });
    expect(JSON.parse(stdout)).toEqual({
      assistants: ['agent'],
      found: true,
      wait: ['human', 'ai'],
      stream: ['messages', 'metadata', 'values'],
      state: ['human', 'ai', 'human', 'ai', 'tool', 'ai'],
      history: [4, 3, 2, 1, 0, -1],
      interrupt: { action: 'bash', args: { command: 'echo gated' } },
      resumed: ['edited\n'],
      patched: 'patched',
      copied: 6,
      stateless: ['human', 'ai'],
      cron: '0 9 * * *',
      graph_input: [6, 'completed'],
      model: 'openai:gpt-4o',
      // Parity (issue 32): join_stream without stream_mode, and paging, as LangGraph's server does.
      join: {
        modes: ['messages/complete', 'messages/metadata', 'messages/partial', 'values'],
        whole: true,
        after: true,
      },
      paging: {
        assistants: true,
        assistants_by_id: true,
        threads: true,
        threads_by_id: true,
        runs: true,
        runs_succeeded: true,
        crons: true,
        crons_by_id: true,
      },
    });
  });
});
