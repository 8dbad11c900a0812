/**
 * Builds the workflow bundle with Temporal's bundler: a check that workflow code is deterministic
 * enough to bundle (no Node built-ins), and a prebuilt bundle that spares each worker start.
 *
 *   tsx worker/bundle.ts --check        build and report size
 *   tsx worker/bundle.ts --out FILE     build and write FILE
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildWorkflowBundle } from './workflow-bundle';

export { buildWorkflowBundle };

/** The public module other workflows import (`keel/workflow`): it must bundle on its own too. */
export const agentsModulePath = path.resolve(
  __dirname,
  `../workflows/agents/index${path.extname(__filename)}`,
);

async function main(): Promise<void> {
  const out = process.argv.indexOf('--out');
  const [code, agents] = await Promise.all([buildWorkflowBundle(), buildWorkflowBundle(agentsModulePath)]);
  console.log(`keel/workflow bundle ok: ${(agents.length / 1024).toFixed(0)} KiB`);
  if (out !== -1 && process.argv[out + 1] !== undefined) await writeFile(process.argv[out + 1]!, code);
  console.log(`workflow bundle ok: ${(code.length / 1024).toFixed(0)} KiB`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`workflow bundle failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
