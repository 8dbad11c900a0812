import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '../..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/** Every Markdown file of the docs: the README, BENCHMARKS.md, docs/ and the benchmark history. */
function markdownFiles(): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? walk(path.join(folder, entry.name))
        : entry.name.endsWith('.md')
          ? [path.join(folder, entry.name)]
          : [],
    );
  return ['README.md', 'BENCHMARKS.md', ...walk('docs'), ...walk('bench/results')];
}

/** The anchors GitHub gives a page's headings. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of read(file).split('\n')) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    anchors.add(
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\- _]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return anchors;
}

describe('the docs as a map', () => {
  it('keeps the README one sitting long (at most 250 lines)', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('keeps in the README the test command .ci/run runs, and .ci/run running it', () => {
    expect(read('README.md')).toContain('npm ci && npm test');
    expect(read('.ci/run').trimEnd().split('\n').at(-1)).toBe('npm ci && npm test');
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    const files = markdownFiles();
    for (const file of files) {
      // Fenced code is code, not links.
      const text = read(file).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (target === undefined || /^(https?:|mailto:)/.test(target)) continue;
        const [linked = '', anchor] = target.split('#');
        const resolved = linked === '' ? file : path.normalize(path.join(path.dirname(file), linked));
        if (!existsSync(path.join(root, resolved))) broken.push(`${file} → ${target}`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${file} → ${target} (no such heading)`);
      }
    }
    expect(files.length).toBeGreaterThan(100);
    expect(broken).toEqual([]);
  });
});
