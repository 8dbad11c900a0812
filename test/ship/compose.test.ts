/**
 * docker-compose.yml, checked without a Docker engine: its variables interpolated as Compose
 * does (defaults taken, a required variable given a value of the form its message asks for),
 * each Keel service's environment fed to Keel's own configuration check, the Web UI wired to the
 * API's codec endpoint for it, the worker an ordinary user given what bubblewrap needs; and
 * `docker-compose config` (Debian's docker-compose, which .ci/run installs) validates the whole file.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { NetworkInterfaceInfo } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../../platform/config';
import { refusedLiveUrl } from '../../platform/live-workers';
import { reachableHost } from '../../worker/live-text-server';
import { repositoryRoot, run } from '../helpers/shipping';

interface ComposeService {
  environment?: Record<string, string | number>;
  ports?: string[];
  cap_add?: string[];
  security_opt?: string[];
  cap_drop?: string[];
  user?: string;
  command?: string[];
}

/** What a user sets before `docker compose up`, each as the file's own message says to make it. */
const required: Record<string, string> = {
  KEEL_API_TOKENS: `me:${randomBytes(24).toString('hex')}`,
  KEEL_CODEC_UI_TOKEN: randomBytes(24).toString('hex'),
  KEEL_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
};

/** Compose's interpolation of one value: `${NAME:-default}`, `${NAME:?message}`, `$$` for `$`. */
function interpolate(text: string): string {
  return text.replace(
    /\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}/g,
    (match, name?: string, kind?: string, rest?: string) => {
      if (name === undefined) return '$';
      const value = required[name];
      if (value !== undefined) return value;
      if (kind === '-') return rest ?? '';
      if (kind === '?') throw new Error(`${name} is required and the test has no value for it: ${rest}`);
      return match;
    },
  );
}

/** Compose interpolates after parsing: every string value in the file. */
function interpolated(value: unknown): unknown {
  if (typeof value === 'string') return interpolate(value);
  if (Array.isArray(value)) return value.map(interpolated);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, interpolated(each)]));
  return value;
}

let services: Record<string, ComposeService>;

beforeAll(async () => {
  const text = await readFile(path.join(repositoryRoot, 'docker-compose.yml'), 'utf8');
  const file = interpolated(parse(text, { merge: true })) as { services: Record<string, ComposeService> };
  services = file.services;
});

const environmentOf = (name: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(services[name]?.environment ?? {}).map(([key, value]) => [key, String(value)]),
  );

describe('docker-compose.yml', () => {
  it.each(['keel-worker', 'keel-api'])(
    "gives %s an environment Keel's configuration check accepts",
    (name) => {
      const environment = environmentOf(name);
      expect(Object.keys(environment).length).toBeGreaterThan(3);
      expect(() => parseConfig(environment, '/app')).not.toThrow();
    },
  );

  it("points the Web UI at the API's codec endpoint for it, whose token and origins the API takes", () => {
    const api = parseConfig(environmentOf('keel-api'), '/app');
    const published = services['keel-api']?.ports?.[0]?.split(':');
    expect(published?.slice(0, 2)).toEqual(['127.0.0.1', String(api.api.port)]);
    expect(environmentOf('temporal-ui').TEMPORAL_CODEC_ENDPOINT).toBe(
      `http://127.0.0.1:${api.api.port}/codec/ui/${required.KEEL_CODEC_UI_TOKEN}`,
    );
    expect(api.encryption.uiToken).toBe(required.KEEL_CODEC_UI_TOKEN);
    const uiPort = services['temporal-ui']?.ports?.[0]?.split(':')[1];
    expect(api.encryption.corsOrigins).toEqual(
      expect.arrayContaining([`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`]),
    );
  });

  it('streams answers live: each worker advertises its address on the compose network, and the API reads from it (decision 0461)', () => {
    const worker = parseConfig(environmentOf('keel-worker'), '/app').tokens;
    const api = parseConfig(environmentOf('keel-api'), '/app').tokens;
    expect(worker.channel).toBe('live');
    expect(api.channel).toBe('live');
    expect(worker.advertisedUrl).toBeUndefined();
    // Docker gives a container an address on the compose network from one of the private ranges.
    for (const address of ['172.18.0.5', '192.168.32.3', '10.0.9.4']) {
      const container = {
        lo: [
          { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '', internal: true, cidr: null },
        ],
        eth0: [
          {
            address,
            netmask: '255.255.0.0',
            family: 'IPv4',
            mac: '02:42:ac:12:00:05',
            internal: false,
            cidr: null,
          },
        ],
      } satisfies NodeJS.Dict<NetworkInterfaceInfo[]>;
      const advertised = `http://${reachableHost(worker.host, container)}:41234`;
      expect(advertised).toBe(`http://${address}:41234`);
      expect(refusedLiveUrl(api.liveWorkers, advertised)).toBeUndefined();
    }
    for (const elsewhere of ['http://169.254.169.254:80', 'http://8.8.8.8:443', 'http://0.0.0.0:41234']) {
      expect(refusedLiveUrl(api.liveWorkers, elsewhere)).toMatch(/not in KEEL_API_LIVE_WORKERS/);
    }
  });

  it("keeps the Store's items in the compose PostgreSQL, in the database its schema step makes (decision 0435)", () => {
    const store = parseConfig(environmentOf('keel-api'), '/app').store;
    expect(store).toEqual({ kind: 'postgres', url: expect.stringMatching(/@postgresql:5432\/keel_store$/) });
    expect(JSON.stringify(services['temporal-schema']?.command)).toContain(
      '--database keel_store create-database',
    );
  });

  it('runs the worker as an ordinary user with no capabilities, allowed only the user namespaces, mounts and pivot_root bubblewrap makes (decisions 0465, 0540)', () => {
    const worker = services['keel-worker'];
    expect(worker?.user).toBe('node');
    expect(worker?.cap_drop).toEqual(['ALL']);
    expect(worker?.cap_add).toBeUndefined();
    expect(worker?.security_opt).toEqual([
      'no-new-privileges:true',
      'seccomp=./keel-worker-seccomp.json',
      'apparmor=unconfined',
    ]);
    expect(environmentOf('keel-worker').KEEL_SANDBOX ?? 'on').toBe('on');
  });

  it('runs the API as an ordinary user with no capabilities', () => {
    const api = services['keel-api'];
    expect(api?.user).toBe('node');
    expect(api?.cap_drop).toEqual(['ALL']);
    expect(api?.security_opt).toEqual(['no-new-privileges:true']);
    expect(api?.cap_add).toBeUndefined();
  });

  const compose = (() => {
    try {
      execFileSync('docker-compose', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  // CI installs Debian's docker-compose (.ci/run); a machine without it skips only this check.
  (compose ? it : it.skip)(
    compose
      ? 'is valid for docker-compose config'
      : 'is valid for docker-compose config (skipped: docker-compose is not installed here; .ci/run installs it)',
    async () => {
      const output = await run('docker-compose', ['config'], {
        cwd: repositoryRoot,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...required },
      });
      expect(output).toContain('keel-worker:');
    },
  );
});
