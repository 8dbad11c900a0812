/**
 * A conversation hands its state to a fresh run once its history passes 1 MiB, long before the
 * server would suggest it, so a worker that picks it up cold replays little (the 30-minute soak
 * saw 3 MB histories time out their workflow tasks on a loaded machine).
 */
import { limits } from '../../common/limits';
import { handOverHistory } from '../../workflows/interpreter/workflow';
import { ThreadDirectory } from '../../api/threads/thread-directory';
import { TestConversation } from '../helpers/conversation';
import { runsOf } from '../helpers/temporal';
import { outlineHistory } from '../helpers/history';
import { randomCjk } from '../helpers/random-text';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(180_000);

describe('a conversation whose history grows large', () => {
  const setup = workerHarness();

  it('continues as new once its history passes 1 MiB, keeping count of every message', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config);
    // Each turn writes its input (and the quoting answer) to history: ~300 KB, three bytes a
    // character, of characters drawn at random so that the codec's compression (decision 0250)
    // leaves ~60 % of it.
    const turns = 18;
    for (let turn = 0; turn < turns; turn++) {
      const text = `turn ${turn} ${randomCjk(limits.maxInputChars - 20)}`;
      expect((await conversation.ask(text)).status).toBe('completed');
    }
    const runs = (await runsOf(setup.client, conversation.handle.workflowId)).map((execution) => ({
      runId: execution.runId,
      events: execution.historyLength,
      bytes: execution.historySize ?? 0,
      handedOver: execution.status.name === 'CONTINUED_AS_NEW',
    }));
    // A run that handed over past the size, with fewer events than the server's suggestion
    // (150 on the test server) asks for: a run hands over once it wrote 1 MiB (about six turns
    // of about 20 events and 200 KB compressed each); the state it started with is not counted (patch
    // keel-hand-over-by-growth).
    expect(runs.length).toBeGreaterThan(2);
    expect(runs.some((run) => run.events > 0 && run.events < 150 && run.bytes > handOverHistory.bytes)).toBe(
      true,
    );
    // A run that took over (and handed over in turn, so it took input) records one patch marker as
    // it starts (and the one since, with its first streamed model call: decision 0370), and writes no search attribute before its first input: it carries over what the last run
    // wrote (decision 0220).
    const histories = await Promise.all(
      runs
        .filter((run) => run.handedOver)
        .map(
          async (run) =>
            (await setup.client.workflow.getHandle(conversation.handle.workflowId, run.runId).fetchHistory())
              .events ?? [],
        ),
    );
    const tookOver = histories.find(
      (events) => events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId,
    );
    expect(tookOver).toBeDefined();
    const { outline } = outlineHistory(tookOver!);
    expect(outline.slice(0, 4)).toEqual([
      'workflow_execution_started',
      'task',
      'patch keel-tracing-per-worker',
      'visibility TemporalChangeVersion',
    ]);
    expect(outline.filter((event) => event.startsWith('patch '))).toEqual([
      'patch keel-tracing-per-worker',
      'patch keel-stop-keeps-partial',
    ]);
    const firstInput = outline.indexOf('update submitInput');
    expect(firstInput).toBeGreaterThan(0);
    expect(outline.slice(0, firstInput).filter((event) => event.startsWith('visibility Keel'))).toEqual([]);
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
