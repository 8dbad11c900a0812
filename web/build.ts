/**
 * Builds the web chat (`web/src` → `web/dist`, committed) with Vite. `--check` builds into a
 * temporary folder and fails when the result differs from `web/dist`, so the committed page
 * always matches its source (docs/decisions/0110-web-chat-build-committed.md).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type * as Vite from 'vite';

const viteModule = 'vite';

const webRoot = __dirname;
export const distDir = path.join(webRoot, 'dist');

async function buildInto(outDir: string): Promise<void> {
  // Vite is published as ES modules only: loaded at run time from this CommonJS script (named
  // through a variable, which keeps import-x from reading Vite's sources, which it cannot resolve).
  const { build } = (await import(viteModule)) as typeof Vite;
  await build({
    root: webRoot,
    configFile: false,
    base: './',
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      reportCompressedSize: false,
      chunkSizeWarningLimit: 2_000,
      rolldownOptions: {
        onwarn(warning, warn) {
          // LangGraph's React hooks say "use client" (for server components); a page is all client.
          if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
        },
      },
    },
  });
}

/** Every file under `dir` with its bytes, by path relative to `dir`. */
async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, full), await readFile(full));
  }
  return files;
}

/** The differences between two builds, as lines a person can act on. */
function differences(committed: Map<string, Buffer>, fresh: Map<string, Buffer>): string[] {
  const lines: string[] = [];
  for (const [name, bytes] of fresh) {
    const old = committed.get(name);
    if (old === undefined) lines.push(`missing: web/dist/${name}`);
    else if (!old.equals(bytes)) lines.push(`differs: web/dist/${name}`);
  }
  for (const name of committed.keys()) if (!fresh.has(name)) lines.push(`left over: web/dist/${name}`);
  return lines;
}

async function main(): Promise<void> {
  if (!process.argv.includes('--check')) {
    await buildInto(distDir);
    return;
  }
  const scratch = await mkdtemp(path.join(tmpdir(), 'keel-web-'));
  try {
    await buildInto(scratch);
    const found = differences(await filesOf(distDir), await filesOf(scratch));
    if (found.length > 0) {
      console.error(`web/dist does not match web/src: run \`npm run build:web\` and commit web/dist.`);
      for (const line of found) console.error(`  ${line}`);
      process.exitCode = 1;
    } else console.log('web page ok: web/dist matches web/src');
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

if (require.main === module) void main();
