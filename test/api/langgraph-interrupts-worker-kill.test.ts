/**
 * Interrupts survive a worker killed with SIGKILL: LangGraph's JS SDK resumes an approval-gated
 * tool call (accept, edit, respond) on a real `keel worker` process that is killed while the run
 * waits, and again right after the answer was taken.
 */
import { Client } from '@langchain/langgraph-sdk';
import { processApiHarness } from '../helpers/api';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

jest.setTimeout(180_000);

interface WireMessage {
  type: string;
  content: unknown;
  tool_calls?: Array<{ args: Record<string, unknown> }>;
}
const human = (content: string) => ({ messages: [{ type: 'human', content }] });
const messagesOf = (values: unknown): WireMessage[] => (values as { messages: WireMessage[] }).messages;

describe('LangGraph interrupts across a worker killed with SIGKILL', () => {
  const harness = processApiHarness();
  let client: Client;
  let asking: string;
  const workers: WorkerProcess[] = [];

  /** Kills the live worker and starts another on the same task queue. */
  const replaceWorker = async () => {
    const current = workers.at(-1) ?? harness.worker;
    current.kill('SIGKILL');
    await current.exited;
    const next = await startWorkerProcess({
      env: { KEEL_TASK_QUEUE: harness.config.taskQueue, KEEL_DATA_DIR: harness.config.dataDir },
    });
    await next.waitForLog((line) => line.msg === 'worker ready');
    workers.push(next);
  };

  beforeAll(async () => {
    client = new Client({ apiUrl: harness.base });
    asking = (
      await client.assistants.create({
        graphId: 'agent',
        config: { configurable: { tool_rules: { bash: 'ask' } } },
      })
    ).assistant_id;
  });

  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
  });

  /** A thread whose run waits on `run: echo <word>`, its stream over at the interrupt. */
  const interrupted = async (word: string) => {
    const thread = await client.threads.create();
    const events: string[] = [];
    for await (const part of client.runs.stream(thread.thread_id, asking, {
      input: human(`run: echo ${word}`),
    }))
      events.push(part.event);
    expect(events.at(-1)).toBe('end');
    return thread.thread_id;
  };

  /** What a side-effecting tool killed mid-call answers: it is never run twice (DESIGN §4). */
  const interruptedTool = /was interrupted \(its worker stopped: .*\) and may have partly run/;

  const cases = [
    {
      answer: 'accept',
      resume: [{ type: 'accept', args: null }],
      word: 'accepted',
      check: (messages: WireMessage[], killedMidTool: boolean) =>
        killedMidTool
          ? expect(String(messages[2]!.content)).toMatch(/^accepted\n$|was interrupted/)
          : expect(messages[2]!.content).toBe('accepted\n'),
    },
    {
      answer: 'edit',
      resume: [{ type: 'edit', args: { action: 'bash', args: { command: 'echo edited' } } }],
      word: 'original',
      check: (messages: WireMessage[], killedMidTool: boolean) => {
        expect(messages[1]!.tool_calls![0]!.args).toEqual({ command: 'echo edited' });
        if (killedMidTool) expect(String(messages[2]!.content)).toMatch(/^edited\n$|was interrupted/);
        else expect(messages[2]!.content).toBe('edited\n');
      },
    },
    {
      answer: 'response',
      resume: [{ type: 'response', args: 'not today' }],
      word: 'denied',
      check: (messages: WireMessage[]) => {
        expect(messages[2]!.content).toContain('not today');
        expect(String(messages[2]!.content)).not.toMatch(interruptedTool);
      },
    },
  ];

  it.each(cases)(
    'resumes with $answer after the worker holding the waiting run was killed, and keeps the answer when one is killed right after it',
    async ({ resume, check, word }) => {
      const waitingThroughKill = await interrupted(word);
      await replaceWorker();
      check(messagesOf(await client.runs.wait(waitingThroughKill, asking, { command: { resume } })), false);

      const answeredThenKilled = await interrupted(word);
      const run = await client.runs.create(answeredThenKilled, asking, { command: { resume } });
      await replaceWorker();
      // The answer was taken before the kill; the tool it started may have been cut short.
      check(messagesOf(await client.runs.join(answeredThenKilled, run.run_id)), true);
      expect((await client.threads.get(answeredThenKilled)).status).toBe('idle');
    },
  );
});
