/**
 * The peer benchmark's harness end to end (no figures): LangGraph's dev server, built from PyPI
 * into its cached virtualenv, answers a tool turn through LangGraph's JS SDK against the fake
 * Anthropic server, logs the run's server-side times, and its process tree's CPU can be read.
 */
import { Client } from '@langchain/langgraph-sdk';
import { type LanggraphServer, startLanggraphServer } from '../../bench/peer/langgraph-server';
import { treeCpuSeconds } from '../../bench/peer/process-tree';
import { type FakeAnthropic, startFakeAnthropic, toolUsingResponder } from '../fakes/anthropic-server';
import { freePort } from '../helpers/api';

// The first run builds the virtualenv (pip, about 80 packages); later runs find it in the cache.
jest.setTimeout(900_000);

describe("the peer benchmark's LangGraph server", () => {
  let fake: FakeAnthropic;
  let server: LanggraphServer;

  beforeAll(async () => {
    fake = await startFakeAnthropic({ responder: toolUsingResponder });
    server = await startLanggraphServer({
      anthropicUrl: fake.url,
      anthropicKey: 'test-key',
      port: await freePort(),
      onProgress: (line) => process.stderr.write(`${line}\n`),
    });
  }, 900_000);

  afterAll(async () => {
    await server?.stop();
    await fake?.close();
  });

  it('answers a tool turn through the JS SDK: the model asks for bash, the tool runs, the model answers', async () => {
    const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const cpuBefore = await treeCpuSeconds(server.pid);

    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'run: echo hi from the peer' }] },
    })) as { messages: Array<{ type: string; content: unknown }> };

    expect(values.messages.map((message) => message.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(values.messages[2]!.content).toBe('hi from the peer\n');
    expect(values.messages[3]!.content).toBe('Result: hi from the peer\n');
    // The fake saw both model calls, the second carrying the bash output as a tool_result.
    expect(fake.requests).toHaveLength(2);
    expect(fake.violations).toEqual([]);
    const toolResult = (
      fake.requests[1]!.body.messages.at(-1)!.content as Array<Record<string, unknown>>
    )[0]!;
    expect(toolResult).toMatchObject({ type: 'tool_result', content: 'hi from the peer\n' });

    // The server logs the run's end (with its times) just after it answers the wait.
    const deadline = Date.now() + 30_000;
    while (!server.runs.some((run) => run.thread_id === thread.thread_id) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const run = server.runs.find((record) => record.thread_id === thread.thread_id);
    expect(run).toBeDefined();
    expect(run!.started_ms).toBeGreaterThanOrEqual(run!.created_ms);
    expect(run!.ended_ms).toBeGreaterThan(run!.started_ms);
    expect(await treeCpuSeconds(server.pid)).toBeGreaterThan(cpuBefore);
  });
});
