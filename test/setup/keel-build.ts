/**
 * Keel's sources compiled once for the run, laid out as the package's build (`dist/` beside
 * package.json, decision 0350), for the `keel worker` and `keel api` processes the tests start.
 * A worker's start cost 5.3–6.3 s of CPU through tsx and 3.1–3.4 s compiled, and the chaos files
 * start dozens (decision 0515). The code is the same: each file is compiled by itself with the
 * options Jest compiles the sources with in-process (jest.config.js), and nothing is bundled.
 * The package root is a folder of links to this checkout's entries, so its non-code files
 * (package.json, web/dist, the cluster's config) are the checkout's own.
 */
import { copyFile, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { transformFile } from '@swc/core';

const root = path.resolve(__dirname, '../..');

/** What `npm run build` compiles (tsconfig.build.json's `include`). */
const sourceFolders = [
  'common',
  'codec',
  'store',
  'workflows',
  'activities',
  'worker',
  'api',
  'launch',
  'telemetry',
  'platform',
  'cli',
];

async function filesUnder(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') found.push(...(await filesUnder(file)));
    } else found.push(file);
  }
  return found;
}

/** Builds Keel into `directory`/keel and returns the `node` arguments that run its `keel` command. */
export async function buildKeel(directory: string): Promise<string[]> {
  const packageRoot = path.join(directory, 'keel');
  const dist = path.join(packageRoot, 'dist');
  await mkdir(dist, { recursive: true });
  for (const entry of await readdir(root))
    if (entry !== 'dist' && entry !== '.git')
      await symlink(path.join(root, entry), path.join(packageRoot, entry));
  const files = (
    await Promise.all(sourceFolders.map((folder) => filesUnder(path.join(root, folder))))
  ).flat();
  await Promise.all(
    files.map(async (file) => {
      const target = path.join(dist, path.relative(root, file));
      await mkdir(path.dirname(target), { recursive: true });
      if (file.endsWith('.test.ts') || file.endsWith('.d.ts')) return;
      if (!file.endsWith('.ts')) return copyFile(file, target);
      const { code } = await transformFile(file, {
        swcrc: false,
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      });
      await writeFile(target.replace(/\.ts$/, '.js'), code);
    }),
  );
  return [path.join(dist, 'cli', 'keel.js')];
}
