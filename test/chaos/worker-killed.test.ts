/**
 * Real `keel worker` processes killed with SIGKILL at chosen points. Each scenario asserts the
 * run finishes on its own, nothing is lost or run twice, and the fake Anthropic server never saw
 * an orphaned tool_use.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';
import { eventually } from '../helpers/temporal';
import {
  alive,
  anthropicModel,
  chaosHarness,
  anyToolResponder,
  threadProcesses,
  heartbeatRecorded,
  lines,
  userTexts,
  workspaceOf,
} from './chaos-helpers';

jest.setTimeout(120_000);

describe('a worker process killed with SIGKILL', () => {
  const harness = chaosHarness();

  /** `local`: as for a caller that waits (`runs/wait`), the call is a local activity. */
  const killMidModelCall = async (local: boolean): Promise<void> => {
    const first = await harness.fleet.start();
    const conversation = await harness.conversation();
    const before = harness.fake.requests.length;
    harness.fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'a slow answer that never arrives '.repeat(20) }],
      tokenDelayMs: 200,
    });
    const run = await conversation.submit('hello there', local ? { deltas: false } : {});
    await harness.fake.waitForRequests(before + 1, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;
    await harness.fleet.start();
    const done = await conversation.finished(run.run_id, 60_000);
    const recoverySeconds = (Date.now() - killedAt) / 1000;
    process.stderr.write(
      `[chaos] SIGKILL mid-${local ? 'local-' : ''}model-call → run completed in ${recoverySeconds.toFixed(1)} s\n`,
    );
    expect(done.status).toBe('completed');
    const transcript = await conversation.transcript();
    expect(
      transcript.filter((message) => message.run_id === run.run_id && message.role === 'assistant'),
    ).toHaveLength(1);
    expect(lastAnswer(transcript)).toBe('You said: hello there');
    // At least the cut call and its retry (a loaded machine can add a retry; the transcript stays single).
    expect(harness.fake.requests.length - before).toBeGreaterThanOrEqual(2);
    const markers = (await conversation.handle.fetchHistory()).events?.filter(
      (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    if (local) expect(markers?.length).toBe(1);
    else expect(markers).toEqual([]);
  };

  it('completes the same run after a kill mid-model-call, with exactly one assistant message', async () => {
    await killMidModelCall(false);
  });

  it('does the same when the call is a local activity (its caller waits for the answer)', async () => {
    await killMidModelCall(true);
  });

  it('counts a call lost with its worker at what it reserved, so a tight ceiling holds through the retry (decision 0425)', async () => {
    const first = await harness.fleet.start();
    // Less than input + 8,192: the call is asked for what is left, and reserves the whole ceiling.
    const ceiling = 3_000;
    const conversation = await TestConversation.start(harness.client, harness.config, {
      ...anthropicModel,
      max_tokens: ceiling,
    });
    const requests = harness.fake.requests.length;
    const billedFrom = harness.fake.billed.length;
    harness.fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'a slow answer that is billed as it goes '.repeat(20) }],
      tokenDelayMs: 200,
    });
    const run = await conversation.submit('hello under a ceiling');
    await harness.fake.waitForRequests(requests + 1, 30_000);
    // The reservation reached Temporal in the call's heartbeat before the worker dies.
    await heartbeatRecorded(conversation.handle, 'callModel');
    await first.stop('SIGKILL');
    await harness.fleet.start();
    const done = await conversation.finished(run.run_id, 60_000);
    // The retry found the lost attempt's reservation spent and nothing left: refused, not overrun.
    expect(done).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(done.error?.message).toContain('after the attempts before it');
    expect(harness.fake.requests.length - requests).toBe(1);
    const billed = harness.fake.billed
      .slice(billedFrom)
      .reduce((sum, entry) => sum + entry.input_tokens + entry.output_tokens, 0);
    expect(billed).toBeGreaterThan(0);
    expect(billed).toBeLessThanOrEqual(ceiling);
    // The ledger holds the lost attempt at its reservation: never less than was billed.
    const thread = await conversation.thread();
    expect(thread.summary.tokens).toBe(ceiling);
  });

  it('does not run a side-effecting tool twice: the model hears it was interrupted and the run goes on', async () => {
    const worker = await harness.fleet.start();
    const conversation = await harness.conversation();
    const workspace = workspaceOf(harness.config, conversation.threadId);
    harness.leftovers.push(conversation.threadId);
    const run = await conversation.submit('run: echo $$ > pid; echo ran >> marker; sleep 60');
    await eventually(
      async () => ((await lines(path.join(workspace, 'marker'))).length > 0 ? true : undefined),
      30_000,
      'the tool to start',
    );
    expect(await threadProcesses(conversation.threadId)).not.toEqual([]);
    // Its heartbeat named the worker: the workflow can ask that worker after the timeout.
    await heartbeatRecorded(conversation.handle, 'runTool');
    await worker.stop('SIGKILL');
    // The sandbox dies with its parent: nothing of the command outlives the worker.
    await eventually(
      async () => ((await threadProcesses(conversation.threadId)).length === 0 ? true : undefined),
      10_000,
      'the command to die with the worker',
    );
    await harness.fleet.start();
    const done = await conversation.finished(run.run_id, 90_000);
    expect(done.status).toBe('completed');
    expect(await lines(path.join(workspace, 'marker'))).toEqual(['ran']);
    const [result] = toolResults(await conversation.transcript());
    expect(result).toMatchObject({ is_error: true });
    // The workflow asked the dead worker's endpoint, and nothing answered (decision 0412).
    expect(result!.content).toBe(
      'Tool "bash" was interrupted (its worker stopped: Temporal heard no heartbeat from it for 10 s, and it no longer answers) and may have partly run; it was not run again.',
    );
  });

  it('retries a read-only extension tool on the next worker, and the dead worker leaves no extension behind', async () => {
    const log = path.join(harness.config.dataDir, 'extensions.log');
    const file = path.join(harness.config.dataDir, 'extensions.json');
    const server = {
      command: process.execPath,
      args: ['--import', 'tsx', path.resolve(__dirname, '../fakes/extension-server.ts'), 'polite'],
      env: { EXTENSION_LOG: log },
      read_only: ['mark'],
    };
    await writeFile(file, JSON.stringify({ servers: { polite: server } }));
    const worker = await harness.fleet.start({ KEEL_EXTENSIONS_FILE: file });
    const conversation = await harness.conversation();
    const marker = path.join(harness.config.dataDir, `mark-${conversation.threadId}`);
    const run = await conversation.submit(
      `call: polite__mark ${JSON.stringify({ file: marker, ms: 6_000 })}`,
    );
    await eventually(
      async () => ((await lines(marker)).length > 0 ? true : undefined),
      30_000,
      'the tool to start',
    );
    const [firstPid] = await lines(marker);
    await worker.stop('SIGKILL');
    // Its stdin closed with the worker, so the extension ended too.
    await eventually(
      () => Promise.resolve(alive(Number(firstPid)) ? undefined : true),
      10_000,
      'the extension to exit',
    );
    await harness.fleet.start({ KEEL_EXTENSIONS_FILE: file });
    expect((await conversation.finished(run.run_id, 90_000)).status).toBe('completed');
    expect(await lines(marker)).toHaveLength(2);
    const [result] = toolResults(await conversation.transcript());
    expect(result).toMatchObject({ content: 'marked' });
    expect(result!.is_error).toBeFalsy();
  });

  it('ends a run failed with a readable error when the retried call is refused for good, and the next run works', async () => {
    const first = await harness.fleet.start();
    const conversation = await harness.conversation();
    // Keyed on this turn's text, so no other request can take these replies.
    let seen = 0;
    harness.fake.setResponder((request, index) => {
      const last = request.messages.at(-1)!;
      const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
      if (!text.includes('refuse this turn') || text.includes('again'))
        return anyToolResponder(request, index);
      seen++;
      return seen === 1
        ? { kind: 'message', content: [{ type: 'text', text: 'cut off '.repeat(50) }], tokenDelayMs: 200 }
        : { kind: 'error', status: 401, type: 'authentication_error', message: 'invalid x-api-key' };
    });
    const run = await conversation.submit('refuse this turn');
    await eventually(() => Promise.resolve(seen > 0 ? true : undefined), 30_000, 'the model call');
    await first.stop('SIGKILL');
    await harness.fleet.start();
    const failed = await conversation.finished(run.run_id, 60_000);
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toMatch(/x-api-key/);
    expect((await conversation.ask('again')).status).toBe('completed');
    expect(lastAnswer(await conversation.transcript())).toMatch(/^You said: [\s\S]*again$/);
  });

  it('loses nothing when killed while the thread waits for a user message', async () => {
    const worker = await harness.fleet.start();
    const conversation = await harness.conversation();
    expect((await conversation.ask('first', {})).status).toBe('completed');
    await worker.stop('SIGKILL');
    // No worker polls while the message arrives: the update waits in Temporal for the next one.
    const submitted = conversation.submit('second');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await harness.fleet.start();
    const run = await submitted;
    expect((await conversation.finished(run.run_id, 60_000)).status).toBe('completed');
    const transcript = await conversation.transcript();
    expect(userTexts(transcript)).toEqual(['first', 'second']);
    expect(lastAnswer(transcript)).toBe('You said: second');
  });

  it('keeps every turn exactly once across kills at random points, between steps and through continue-as-new', async () => {
    let worker = await harness.fleet.start();
    const conversation = await harness.conversation();
    const workspace = workspaceOf(harness.config, conversation.threadId);
    await writeFile(path.join(workspace, '.keep'), '').catch(() => undefined);
    let stop = false;
    let kills = 0;
    const killer = (async () => {
      while (!stop) {
        await new Promise((resolve) => setTimeout(resolve, 2_000 + Math.random() * 3_000));
        if (stop) break;
        await worker.stop('SIGKILL');
        kills++;
        worker = await harness.fleet.start();
      }
    })();
    // At least 8 turns, and more until the killer has struck twice: on a quiet machine 8 turns
    // can finish before the first kill, and a chaos test without a kill proves nothing.
    let turns = 0;
    const runIds: string[] = [];
    try {
      while (turns < 8 || (kills < 2 && turns < 40)) {
        const turn = ++turns;
        const run = await conversation.submit(`run: echo turn-${turn} >> marker\nrun: echo turn-${turn}`);
        runIds.push(run.run_id);
        expect((await conversation.finished(run.run_id, 90_000)).status).toBe('completed');
        await conversation.transcript();
      }
    } finally {
      stop = true;
      await killer;
    }
    expect(kills).toBeGreaterThanOrEqual(2);
    const transcript = await conversation.transcript();
    expect(userTexts(transcript)).toHaveLength(turns);
    // Each side-effecting echo ran at most once; an interrupted one says so in its result.
    const marker = await lines(path.join(workspace, 'marker'));
    for (let turn = 1; turn <= turns; turn++)
      expect(marker.filter((line) => line === `turn-${turn}`).length).toBeLessThanOrEqual(1);
    // A tool that never left its marker was interrupted, and its result says so.
    for (const [index, runId] of runIds.entries()) {
      if (marker.includes(`turn-${index + 1}`)) continue;
      const results = toolResults(transcript.filter((message) => message.run_id === runId));
      expect(results.some((result) => result.is_error && /interrupted/.test(result.content))).toBe(true);
    }
    // The thread crossed continue-as-new at least once (the test server suggests it at 150 events).
    const history = await conversation.handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(started?.continuedExecutionRunId).toBeTruthy();
  });
});
