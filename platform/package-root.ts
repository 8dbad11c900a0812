/**
 * Where Keel's files are, whether this process runs the TypeScript sources (through tsx, in a
 * checkout) or the build (`dist/`, made by `npm run build`; what the `keel` bin and the image run).
 * Files that are not code (package.json, the web chat's build, the cluster's dynamic config) stay
 * at the package's root in both cases (decision 0350).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** True when this module is the TypeScript source, false when it is the build's JavaScript. */
export const runningFromSource = path.extname(__filename) === '.ts';

/** The package's root: the folder that holds package.json. */
export const packageRoot = path.resolve(__dirname, runningFromSource ? '..' : '../..');

/** `node` arguments that run a `keel` command in the form this process runs: source or build. */
export function keelCommandArgs(command: string): string[] {
  return runningFromSource
    ? ['--import', 'tsx', path.join(packageRoot, 'cli', 'keel.ts'), command]
    : [path.join(packageRoot, 'dist', 'cli', 'keel.js'), command];
}

/** Keel's version, from its package.json (read, not imported, so the build holds no copy of it). */
export const keelVersion = (
  JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }
).version;
