/**
 * Every tool result is cut where the activity makes it, whichever tool made it: an extension's
 * or a built-in's output never reaches Temporal larger than `limits.toolOutputChars`.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createRunTool } from '../../activities/run-tool';
import { defineTool, ToolRegistry } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { parseConfig } from '../../platform/config';
import { limits } from '../../common/limits';
import type { ToolOutcome } from '../../common/tools';

const huge = defineTool({
  name: 'huge',
  description: 'Answers with as many characters as asked (an extension that says too much).',
  input: z.object({ chars: z.number().int() }),
  flags: { sideEffects: false, sensitive: false },
  source: 'chatty-extension',
  run: ({ chars }) => Promise.resolve({ is_error: false, content: 'z'.repeat(chars) }),
});

describe('tool results', () => {
  it('cuts any tool output at the cap where the activity makes it, and says the full size', async () => {
    const config = parseConfig({ PATH: process.env.PATH }, '/');
    const runTool = createRunTool({
      registry: new ToolRegistry([huge]),
      workspacesDir: await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'tool-results-')),
      environment: {},
      sandbox: new Sandbox(config.sandbox, config.childEnvironment.PATH),
    });
    const call = (chars: number): Promise<ToolOutcome> =>
      new MockActivityEnvironment().run(runTool, {
        thread_id: 't1',
        run_id: 'r1',
        tool_use_id: 'u1',
        name: 'huge',
        input: { chars },
        idempotency_key: 't1:u1',
      });
    const big = await call(5_000_000);
    expect(big.content.length).toBeLessThan(limits.toolOutputChars + 100);
    expect(big.content).toMatch(/\[… truncated by Keel: showing 200000 of 5000000 characters\]$/);
    expect(await call(10)).toEqual({ is_error: false, content: 'z'.repeat(10) });
  });
});
