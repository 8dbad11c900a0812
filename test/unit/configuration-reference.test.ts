import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../platform/config';

/** Every variable the configuration check reads, learned by handing it an environment that records each read. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const environment = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get: (_target, key) => {
        if (typeof key === 'string') read.add(key);
        return undefined;
      },
      has: (_target, key) => {
        if (typeof key === 'string') read.add(key);
        return false;
      },
    },
  );
  parseConfig(environment, '/nowhere');
  return read;
}

/** Keel's own variables: the ones it reads and documents, not those it passes on to Go or to shells. */
const keelVariable = /^(KEEL|TEMPORAL|ANTHROPIC|OPENAI|OLLAMA|OTEL)_[A-Z0-9_]+$/;

/** The variables named in the first column of docs/guide/configuration.md's table. */
function variablesDocumented(): Set<string> {
  const page = readFileSync(path.join(__dirname, '../../docs/guide/configuration.md'), 'utf8');
  const documented = new Set<string>();
  for (const line of page.split('\n')) {
    const firstCell = /^\|([^|]+)\|/.exec(line)?.[1];
    if (firstCell === undefined) continue;
    for (const [, name] of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g))
      if (name !== undefined) documented.add(name);
  }
  return documented;
}

describe('the configuration reference (docs/guide/configuration.md)', () => {
  const read = [...variablesRead()].filter((name) => keelVariable.test(name)).sort();
  const documented = variablesDocumented();

  it('reads the configuration through the recording environment at all', () => {
    expect(read).toEqual(expect.arrayContaining(['KEEL_API_PORT', 'TEMPORAL_ADDRESS', 'OTEL_SERVICE_NAME']));
  });

  it('names every variable the configuration check reads', () => {
    expect(read.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('names no variable the configuration check does not read', () => {
    expect([...documented].filter((name) => !read.includes(name)).sort()).toEqual([]);
  });
});
