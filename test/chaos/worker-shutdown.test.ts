/**
 * Graceful shutdown of real `keel worker` processes: SIGTERM drains in-flight activities within
 * KEEL_SHUTDOWN_GRACE; past it, a side-effecting tool stops and says so in-band and a model call
 * goes to the next worker at once; a second signal forces the exit. Extension servers never
 * outlive the worker.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkerProcess } from '../helpers/worker-process';
import { lastAnswer, toolResults } from '../helpers/conversation';
import { eventually } from '../helpers/temporal';
import { alive, chaosHarness, threadProcesses, lines, workspaceOf } from './chaos-helpers';

jest.setTimeout(120_000);

const root = path.resolve(__dirname, '../..');

describe('a worker process stopped with SIGTERM', () => {
  const harness = chaosHarness();

  /** Anthropic's overloaded answer, retryable at once: one fault of the model. */
  const overloaded = {
    kind: 'error' as const,
    status: 529,
    type: 'overloaded_error',
    message: 'Overloaded',
    headers: { 'retry-after': '0' },
  };

  const toolStarted = (file: string) =>
    eventually(async () => ((await lines(file)).length > 0 ? true : undefined), 30_000, 'the tool to start');

  it('lets an in-flight tool finish within the grace, logs it as drained and exits 0', async () => {
    const worker = await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '30' });
    const conversation = await harness.conversation();
    const workspace = workspaceOf(harness.config, conversation.threadId);
    const run = await conversation.submit('run: echo started > begun; sleep 2; echo finished');
    await toolStarted(path.join(workspace, 'begun'));
    const signalledAt = Date.now();
    const exit = await worker.stop('SIGTERM');
    process.stderr.write(
      `[chaos] SIGTERM with a 2 s tool in flight → exit in ${((Date.now() - signalledAt) / 1000).toFixed(1)} s\n`,
    );
    expect(exit).toEqual({ code: 0, signal: null });
    expect(worker.logs).toContainEqual(
      expect.objectContaining({ msg: 'drained activity', activity: 'runTool', outcome: 'completed' }),
    );
    await harness.fleet.start();
    expect((await conversation.finished(run.run_id, 60_000)).status).toBe('completed');
    const [result] = toolResults(await conversation.transcript());
    expect(result).toMatchObject({ content: 'finished\n' });
    expect(result!.is_error).toBeFalsy();
  });

  it('past the grace, stops a side-effecting tool and reports it interrupted in-band, without a second run', async () => {
    const worker = await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '1' });
    const conversation = await harness.conversation();
    const workspace = workspaceOf(harness.config, conversation.threadId);
    harness.leftovers.push(conversation.threadId);
    const run = await conversation.submit('run: echo $$ > pid; echo ran >> marker; sleep 60');
    await toolStarted(path.join(workspace, 'marker'));
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(worker.logs).toContainEqual(
      expect.objectContaining({ msg: 'drained activity', activity: 'runTool' }),
    );
    // Everything the command started was stopped with the tool.
    await eventually(
      async () => ((await threadProcesses(conversation.threadId)).length === 0 ? true : undefined),
      10_000,
      'the command to stop',
    );
    await harness.fleet.start();
    expect((await conversation.finished(run.run_id, 60_000)).status).toBe('completed');
    expect(await lines(path.join(workspace, 'marker'))).toEqual(['ran']);
    const [result] = toolResults(await conversation.transcript());
    expect(result).toMatchObject({ is_error: true });
    expect(result!.content).toMatch(/interrupted by worker shutdown.*may have partly run/);
  });

  /** `local`: as for a caller that waits (`runs/wait`), the call is a local activity. */
  const shutDownPastGrace = async (local: boolean): Promise<void> => {
    const worker = await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '1' });
    const conversation = await harness.conversation();
    const before = harness.fake.requests.length;
    harness.fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'a slow answer that is cut '.repeat(30) }],
      tokenDelayMs: 200,
    });
    const run = await conversation.submit('hello', local ? { deltas: false } : {});
    await harness.fake.waitForRequests(before + 1, 30_000);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(worker.logs).toContainEqual(
      expect.objectContaining({
        msg: 'drained activity',
        activity: 'callModel',
        outcome: expect.stringMatching(/^failed/),
      }),
    );
    await harness.fleet.start();
    expect((await conversation.finished(run.run_id, 60_000)).status).toBe('completed');
    const transcript = await conversation.transcript();
    expect(transcript.filter((message) => message.role === 'assistant')).toHaveLength(1);
    expect(lastAnswer(transcript)).toBe('You said: hello');
  };

  it('past the grace, hands a model call to the next worker, which answers it once', async () => {
    await shutDownPastGrace(false);
  });

  it('does the same with a model call made as a local activity (its caller waits for the answer)', async () => {
    await shutDownPastGrace(true);
  });

  /** Waits for the model request a worker took (a new one unless given), then shuts it down past its grace. */
  const shutDownMidCall = async (requestsSoFar: number, running?: WorkerProcess): Promise<void> => {
    const worker = running ?? (await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '1' }));
    await harness.fake.waitForRequests(requestsSoFar + 1, 60_000);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  };

  it('spends none of the model call’s six fault attempts on workers that shut down mid-call', async () => {
    const conversation = await harness.conversation();
    const before = harness.fake.requests.length;
    const shutdowns = 7;
    harness.fake.enqueue(...Array.from({ length: shutdowns }, () => ({ kind: 'hang' as const })));
    const first = await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '1' });
    const run = await conversation.submit('hello');
    await shutDownMidCall(before, first);
    for (let index = 1; index < shutdowns; index++) await shutDownMidCall(before + index);
    await harness.fleet.start();
    expect((await conversation.finished(run.run_id, 60_000)).status).toBe('completed');
    expect(harness.fake.requests.length - before).toBe(shutdowns + 1);
    expect(lastAnswer(await conversation.transcript())).toBe('You said: hello');
    // Eight worker starts, each of which takes tens of seconds on a loaded machine.
  }, 360_000);

  it('still fails a model call after six faults of the model, however many workers shut down first', async () => {
    const conversation = await harness.conversation();
    const before = harness.fake.requests.length;
    harness.fake.enqueue({ kind: 'hang' }, { kind: 'hang' }, ...Array.from({ length: 6 }, () => overloaded));
    const first = await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '1' });
    const run = await conversation.submit('hello');
    await shutDownMidCall(before, first);
    await shutDownMidCall(before + 1);
    await harness.fleet.start();
    const finished = await conversation.finished(run.run_id, 60_000);
    expect(finished).toMatchObject({ status: 'failed', error: { type: 'ModelOverloaded' } });
    expect(harness.fake.requests.length - before).toBe(2 + 6);
  });

  it('fails a model call made as a local activity after six faults of the model, as an ordinary one', async () => {
    const conversation = await harness.conversation();
    const before = harness.fake.requests.length;
    harness.fake.enqueue(...Array.from({ length: 6 }, () => overloaded));
    await harness.fleet.start();
    const run = await conversation.submit('hello', { deltas: false });
    const finished = await conversation.finished(run.run_id, 60_000);
    expect(finished).toMatchObject({ status: 'failed', error: { type: 'ModelOverloaded' } });
    expect(harness.fake.requests.length - before).toBe(6);
  });

  it('exits at once, with code 1, on a second signal', async () => {
    const worker = await harness.fleet.start({ KEEL_SHUTDOWN_GRACE: '60' });
    const conversation = await harness.conversation();
    const workspace = workspaceOf(harness.config, conversation.threadId);
    harness.leftovers.push(conversation.threadId);
    await conversation.submit('run: echo $$ > pid; sleep 60');
    await toolStarted(path.join(workspace, 'pid'));
    worker.kill('SIGTERM');
    await worker.waitForLog((line) => line.msg?.startsWith('shutting down') === true);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 1, signal: null });
  });

  it('runs extension tools through the model and leaves no extension process behind', async () => {
    const directory = harness.config.dataDir;
    const log = path.join(directory, 'extensions.log');
    const file = path.join(directory, 'extensions.json');
    const server = (manners: string) => ({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(root, 'test/fakes/extension-server.ts'), manners],
      cwd: root,
      env: { EXTENSION_LOG: log },
    });
    await writeFile(
      file,
      JSON.stringify({ servers: { polite: server('polite'), stubborn: server('stubborn') } }),
    );
    const worker = await harness.fleet.start({ KEEL_EXTENSIONS_FILE: file });
    const conversation = await harness.conversation();
    const run = await conversation.ask('call: polite__echo {"text":"through an extension"}');
    expect(run.status).toBe('completed');
    expect(toolResults(await conversation.transcript())).toMatchObject([{ content: 'through an extension' }]);
    const pids = (await lines(log)).flatMap((line) =>
      line.startsWith('start ') ? [Number(line.split(' ')[2])] : [],
    );
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(pids.filter(alive)).toEqual([]);
    expect(worker.logs.filter((line) => line.msg === 'extension stopped').map((line) => line.answer)).toEqual(
      expect.arrayContaining(['acknowledged', 'no answer']),
    );
  });
});
