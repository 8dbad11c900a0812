/** Shared setup for chaos tests: a fake Anthropic, real worker processes calling it, markers. */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type { KeelConfig } from '../../platform/config';
import type { Message } from '../../common/transcript';
import { randomUUID } from 'node:crypto';
import {
  startFakeAnthropic,
  toolUsingResponder,
  type FakeAnthropic,
  type Responder,
} from '../fakes/anthropic-server';
import { TestConversation } from '../helpers/conversation';
import type { RunningApi } from '../../api/server';
import { startTestApi } from '../helpers/api';
import { fleetHarness, type FleetHarness } from '../helpers/worker-harness';

export const anthropicModel = { model: 'anthropic:claude-sonnet-4-5' };

/** The environment a worker process needs to serve `config`'s task queue against `fake`. */
export function workerEnv(config: KeelConfig, fake: FakeAnthropic, extra: Record<string, string> = {}) {
  return {
    KEEL_TASK_QUEUE: config.taskQueue,
    KEEL_DATA_DIR: config.dataDir,
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    KEEL_MODEL: anthropicModel.model,
    ...extra,
  };
}

export interface ChaosHarness extends FleetHarness {
  /** The fake Anthropic every worker of the fleet calls, answering with `anyToolResponder`. */
  fake: FakeAnthropic;
  /** Threads whose commands may outlive a failed test: their processes are killed at the end. */
  leftovers: string[];
  /** A new conversation on the fleet's task queue, with the fake's model. */
  conversation(): Promise<TestConversation>;
}

/**
 * `fleetHarness` with a fake Anthropic for its workers: after each test no request may have
 * broken the tool_use/tool_result rule.
 */
export function chaosHarness(): ChaosHarness {
  const harness = fleetHarness<ChaosHarness>(
    { workerEnv: ({ config, fake }) => workerEnv(config, fake) },
    {
      afterStart: async (started) => {
        started.fake = await startFakeAnthropic({ responder: anyToolResponder });
      },
      beforeStop: async (started) => {
        for (const threadId of started.leftovers ?? []) await killThreadProcesses(threadId);
        await started.fake?.close();
      },
    },
  );
  harness.leftovers = [];
  harness.conversation = () => TestConversation.start(harness.client, harness.config, anthropicModel);
  afterEach(() => expect(harness.fake.violations).toEqual([]));
  return harness;
}

/**
 * Waits until Temporal holds a heartbeat of the workflow's running activity of this type: a tool
 * call's heartbeats name its worker (decision 0412), the first a second after it starts.
 */
export async function heartbeatRecorded(
  handle: WorkflowHandle,
  activity: 'runTool' | 'callModel',
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { raw } = await handle.describe();
    const beat = (raw.pendingActivities ?? []).some(
      (pending) =>
        pending.activityType?.name === activity && (pending.heartbeatDetails?.payloads?.length ?? 0) > 0,
    );
    if (beat) return;
    if (Date.now() > deadline) throw new Error(`no heartbeat of ${activity} reached Temporal`);
    await sleep(200);
  }
}

export async function lines(file: string): Promise<string[]> {
  try {
    return (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
  } catch {
    return [];
  }
}

export function workspaceOf(config: KeelConfig, threadId: string): string {
  return path.join(config.dataDir, 'workspaces', threadId);
}

/**
 * The host pids of every process a thread's bash commands started, found by the
 * `KEEL_THREAD_ID` each inherits (a pid a command prints is its sandbox's, not the host's).
 */
export async function threadProcesses(threadId: string): Promise<number[]> {
  const entry = `KEEL_THREAD_ID=${threadId}\0`;
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'latin1').catch(() => '');
    if (environ.includes(entry)) found.push(Number(name));
  }
  return found;
}

/** Kills whatever a thread's commands left behind (a test that failed half-way). */
export async function killThreadProcesses(threadId: string): Promise<void> {
  for (const pid of await threadProcesses(threadId)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

export function userTexts(transcript: Message[]): string[] {
  return transcript.flatMap((message) =>
    message.role === 'user'
      ? message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []))
      : [],
  );
}

/**
 * `toolUsingResponder`, plus lines `call: <tool> <json input>` that become tool_use blocks for
 * any tool (extension tools included).
 */
export const anyToolResponder: Responder = (request, index) => {
  const last = request.messages.at(-1)!;
  const text = Array.isArray(last.content)
    ? last.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('\n')
    : last.content;
  const calls = [...text.matchAll(/^call: (\S+) (.+)$/gm)];
  if (calls.length === 0) return toolUsingResponder(request, index);
  return {
    kind: 'message',
    content: calls.map(([, name, input]) => ({
      type: 'tool_use' as const,
      id: `toolu_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      name: name!,
      input: JSON.parse(input!) as Record<string, unknown>,
    })),
  };
};

export function alive(pid: number | null): boolean {
  if (pid === null) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Worker processes on the scripted model that stop within 2 s, and an API in this process that
 * gives up on a read after 1 s: for tests that take every worker down under the API.
 */
export function workersDownHarness(): FleetHarness & { api: RunningApi } {
  return fleetHarness<FleetHarness & { api: RunningApi }>(
    {
      env: () => ({ KEEL_READ_TIMEOUT_MS: '1000' }),
      workerEnv: () => ({ KEEL_MODEL: 'scripted:demo', KEEL_SHUTDOWN_GRACE: '2' }),
    },
    {
      afterStart: async (started) => {
        started.api = await startTestApi(started.client, started.config);
      },
      beforeStop: async (started) => {
        await started.api?.stop();
      },
    },
  );
}
