/**
 * 8. Sandbox: what bubblewrap adds to one bash tool call. The real tool runs `true` in a
 * workspace, sandboxed and unconfined (`KEEL_SANDBOX=off`) in alternation; the difference of the
 * medians is the sandbox's cost per call (namespaces, mounts, the limits shell).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../../activities/tools/bash';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../platform/config';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';

export interface SandboxOptions {
  /** Calls per mode and trial. */
  calls: number;
  trials: number;
}

async function context(dataDir: string, mode: 'on' | 'off'): Promise<ToolContext> {
  const config = parseConfig({ PATH: process.env.PATH, KEEL_SANDBOX: mode }, dataDir);
  return {
    threadId: `bench-${mode}`,
    workspace: await workspaceFor(dataDir, `bench-${mode}`),
    signal: new AbortController().signal,
    idempotencyKey: 'bench',
    environment: config.childEnvironment,
    sandbox: new Sandbox(config.sandbox, config.childEnvironment.PATH),
    networkHosts: [],
  };
}

async function callMs(tool: ToolContext): Promise<number> {
  const started = process.hrtime.bigint();
  const result = await bashTool.run({ command: 'true' }, tool);
  if (result.is_error) throw new Error(`bash failed: ${result.content}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function sandboxCost(options: SandboxOptions): Promise<ScenarioResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-bench-sandbox-'));
  try {
    const confined = await context(dataDir, 'on');
    const unconfined = await context(dataDir, 'off');
    // The first call creates the probe sandbox; not part of the per-call cost.
    await callMs(confined);
    await callMs(unconfined);
    const on: number[] = [];
    const off: number[] = [];
    const total = options.calls * options.trials;
    for (let index = 0; index < total; index++) {
      on.push(await callMs(confined));
      off.push(await callMs(unconfined));
      progress.count('bash calls (each mode)', index + 1, total);
    }
    const onSpread = spread(on);
    const offSpread = spread(off);
    return {
      rows: [
        {
          scenario: '8 sandbox',
          metric: 'bash `true` in bubblewrap, ms per call',
          value: showSpread(onSpread, 1),
          note: `${total} calls`,
        },
        {
          scenario: '',
          metric: '  unconfined (KEEL_SANDBOX=off), ms per call',
          value: showSpread(offSpread, 1),
        },
        {
          scenario: '',
          metric: '  the sandbox adds (difference of medians), ms',
          value: (onSpread.median - offSpread.median).toFixed(1),
        },
      ],
      data: { sandboxed_ms: onSpread, unconfined_ms: offSpread, ...options },
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
