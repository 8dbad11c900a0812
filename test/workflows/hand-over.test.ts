/**
 * A conversation hands its state to a fresh run once its history passes 1 MiB, long before the
 * server would suggest it, so a worker that picks it up cold replays little (the 30-minute soak
 * saw 3 MB histories time out their workflow tasks on a loaded machine).
 */
import { limits } from '../../common/limits';
import { handOverHistory } from '../../workflows/interpreter/workflow';
import { ThreadDirectory } from '../../api/thread-directory';
import { TestConversation } from '../helpers/conversation';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(180_000);

describe('a conversation whose history grows large', () => {
  const setup = workerHarness();

  it('continues as new once its history passes 1 MiB, keeping count of every message', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config);
    // Each turn writes its input (and the quoting answer) to history: ~300 KB, three bytes a character.
    const turns = 14;
    for (let turn = 0; turn < turns; turn++) {
      const text = `turn ${turn} ${'漢'.repeat(limits.maxInputChars - 20)}`;
      expect((await conversation.ask(text)).status).toBe('completed');
    }
    const runs: { runId: string; events: number; bytes: number }[] = [];
    for await (const execution of setup.client.workflow.list({
      query: `WorkflowId = '${conversation.handle.workflowId}'`,
    }))
      runs.push({
        runId: execution.runId,
        events: execution.historyLength,
        bytes: execution.historySize ?? 0,
      });
    // A run that handed over past the size, with fewer events than the server's suggestion
    // (150 on the test server) asks for: a run hands over once it wrote 1 MiB (about four turns
    // of about 20 events and 300 KB each); the state it started with is not counted (patch
    // keel-hand-over-by-growth).
    expect(runs.length).toBeGreaterThan(2);
    expect(runs.some((run) => run.events > 0 && run.events < 150 && run.bytes > handOverHistory.bytes)).toBe(
      true,
    );
    // A thread search lists the thread once, however many times it handed over.
    const listed = await new ThreadDirectory(setup.client, setup.config.taskQueue).search(
      { ids: [conversation.threadId] },
      undefined,
      10,
    );
    expect(listed.map(({ listing }) => listing.thread_id)).toEqual([conversation.threadId]);
    // Every message is accounted for across the hand-overs (the oldest compacted, as any long one).
    expect((await conversation.thread()).messages_count).toBe(2 * turns);
  });
});
