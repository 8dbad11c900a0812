/**
 * The Temporal server itself SIGKILLed (a dev server on its own SQLite file) and restarted on the
 * same port and file: every open conversation continues, including a run that was mid-model-call;
 * a command cut off by the outage says the server, not its worker, stopped.
 */
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../../launch/dev-server';
import type { KeelConfig } from '../../platform/config';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-server';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';
import { testDataConverter } from '../helpers/encryption';
import { eventually, testConfig } from '../helpers/temporal';
import { WorkerFleet } from '../helpers/worker-process';
import {
  anthropicModel,
  anyToolResponder,
  heartbeatRecorded,
  lines,
  userTexts,
  workerEnv,
  workspaceOf,
} from './chaos-helpers';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';
import { freePort } from '../setup/free-port';

jest.setTimeout(180_000);

describe('the Temporal server killed with SIGKILL and restarted', () => {
  let server: DevServer;
  let client: Client;
  let config: KeelConfig;
  let fake: FakeAnthropic;
  let fleet: WorkerFleet;
  let directory: string;
  let port: number;
  let uiPort: number;

  const start = () =>
    startDevServer({
      cliPath: process.env.KEEL_TEST_CLI_PATH!,
      dataDir: directory,
      port,
      uiPort,
      namespace: 'default',
      extraArgs: ['--log-level', 'error'],
    });

  beforeAll(async () => {
    directory = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? '/tmp', 'server-'));
    [port, uiPort] = [await freePort(), await freePort()];
    server = await start();
    fake = await startFakeAnthropic({ responder: anyToolResponder });
    config = await testConfig();
    fleet = new WorkerFleet(() => ({ ...workerEnv(config, fake), TEMPORAL_ADDRESS: server.address }));
    client = new Client({
      connection: await Connection.connect({ address: server.address, interceptors: guardedInterceptors() }),
      dataConverter: testDataConverter(),
    });
  });

  afterAll(async () => {
    await fleet.stopAll();
    await client.connection.close();
    await server.stop();
    await fake.close();
  });

  it('keeps every open conversation going, including a run caught mid-model-call', async () => {
    await fleet.start();
    const idle = await Promise.all([1, 2].map(() => TestConversation.start(client, config, anthropicModel)));
    for (const conversation of idle) expect((await conversation.ask('before')).status).toBe('completed');
    const busy = await TestConversation.start(client, config, anthropicModel);
    const before = fake.requests.length;
    fake.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'slow '.repeat(40) }],
      tokenDelayMs: 200,
    });
    const run = await busy.submit('during');
    await fake.waitForRequests(before + 1, 30_000);

    process.kill(-server.process.pid!, 'SIGKILL');
    await once(server.process, 'exit');
    server = await start();

    expect((await busy.finished(run.run_id, 120_000)).status).toBe('completed');
    expect(userTexts(await busy.transcript())).toEqual(['during']);
    for (const conversation of idle) {
      expect((await conversation.ask('after', {})).status).toBe('completed');
      const transcript = await conversation.transcript();
      expect(userTexts(transcript)).toEqual(['before', 'after']);
      expect(lastAnswer(transcript)).toBe('You said: after');
    }
    expect(fake.violations).toEqual([]);
  });

  it("says a command cut off by the server's outage was interrupted by Temporal, its worker still running", async () => {
    await fleet.start();
    const conversation = await TestConversation.start(client, config, anthropicModel);
    const marker = path.join(workspaceOf(config, conversation.threadId), 'marker');
    const run = await conversation.submit('run: echo ran >> marker; sleep 45');
    await eventually(
      async () => ((await lines(marker)).length > 0 ? true : undefined),
      60_000,
      'the command to start',
    );
    // Its heartbeat (the worker's identity in its details) has reached the server.
    await heartbeatRecorded(conversation.handle, 'runTool');
    process.kill(-server.process.pid!, 'SIGKILL');
    await once(server.process, 'exit');
    // Down for longer than the 10 s heartbeat timeout: back up, the server gives the call up.
    await sleep(12_000);
    server = await start();

    expect((await conversation.finished(run.run_id, 120_000)).status).toBe('completed');
    const [result] = toolResults(await conversation.transcript());
    expect(result).toMatchObject({ is_error: true });
    expect(result!.content).toBe(
      'Tool "bash" was interrupted (a Temporal service stopped or could not be reached: its worker still runs, but Temporal heard no heartbeat from it for 10 s) and may have partly run; it was not run again.',
    );
    expect(await lines(marker)).toEqual(['ran']);
    expect(fake.violations).toEqual([]);
  });
});
