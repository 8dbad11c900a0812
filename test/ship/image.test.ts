/**
 * The Docker image, proven without a Docker engine (there is none on these machines): the
 * Dockerfile's own steps, read from the file, run in temporary directories — each stage's `COPY`
 * lines assemble its files from this repository (or from the stage named by `--from`), its
 * `npm` and `node` steps run as written — then the image's `ENTRYPOINT` starts `worker` and `api`
 * from the image's directory, with its `ENV`, against the test Temporal server, and a turn with
 * a shell command completes through the API.
 * What runs differently, and why: `apt-get` steps (system packages) are checked present on this
 * machine instead, and the directories made for the image's user (`install -d -o node`) are read,
 * not made (this machine has no such user; the processes below run as the test's, and
 * test/api/nonroot-worker.test.ts runs a worker as an ordinary user); the build stage's full
 * `npm ci` links this checkout's node_modules (the same package-lock.json) rather than install
 * 600 MB again; npm reads its cache first. The image's production `npm ci --omit=dev` runs for
 * real, so a module the image lacks fails here.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { access, cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { call, freePort, userInput } from '../helpers/api';
import { type DockerStage, parseDockerfile } from '../helpers/dockerfile';
import { testEncryptionKeys } from '../helpers/encryption';
import { offlineFirst, repositoryRoot, run } from '../helpers/shipping';
import { testAddress } from '../helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

let directory: string;
let stages: DockerStage[];
const stageDirectories = new Map<string, string>();
const skipped: string[] = [];
/** Directories made for the image's user (`install -d -o`): checked, as this machine has no such user. */
const layout: string[] = [];
const started: WorkerProcess[] = [];

/** A path of the image (absolute, or relative to WORKDIR) inside this stage's directory. */
function inStage(stage: DockerStage, target: string): string {
  const absolute = path.posix.resolve(stage.workdir, target);
  return path.join(stageDirectories.get(stage.name)!, path.posix.relative(stage.workdir, absolute));
}

async function runStep(stage: DockerStage, command: string): Promise<void> {
  const root = stageDirectories.get(stage.name)!;
  if (command.startsWith('apt-get ')) {
    skipped.push(command);
    return;
  }
  if (command.startsWith('install -d ')) {
    layout.push(command);
    return;
  }
  if (/^npm ci( --ignore-scripts)?$/.test(command)) {
    await symlink(path.join(repositoryRoot, 'node_modules'), path.join(root, 'node_modules'));
    return;
  }
  const withCache = command.replace(/^npm ci /, `npm ci ${offlineFirst.join(' ')} `);
  await run('sh', ['-ec', withCache], { cwd: root, timeoutMs: 600_000 });
}

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'keel-image-'));
  stages = parseDockerfile(await readFile(path.join(repositoryRoot, 'Dockerfile'), 'utf8'));
  for (const stage of stages) {
    const root = path.join(directory, `stage-${stage.name}`);
    await mkdir(root, { recursive: true });
    stageDirectories.set(stage.name, root);
    for (const step of stage.steps) {
      if (step.kind === 'run') {
        await runStep(stage, step.command);
        continue;
      }
      const fromStage = step.from === undefined ? undefined : stages.find((each) => each.name === step.from);
      for (const source of step.sources) {
        const origin =
          fromStage === undefined ? path.join(repositoryRoot, source) : inStage(fromStage, source);
        const target = step.destination.endsWith('/')
          ? path.join(inStage(stage, step.destination), path.basename(source))
          : inStage(stage, step.destination);
        await cp(origin, target, { recursive: true });
      }
    }
  }
}, 1_200_000);

afterAll(async () => {
  await Promise.all(started.map((process) => process.stop('SIGTERM')));
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('the image the Dockerfile builds', () => {
  it('needs only system packages this machine has, besides its own steps', () => {
    expect(skipped).toHaveLength(1);
    const packages = skipped[0]!.match(/install -y --no-install-recommends ([\w\s.-]+?) &&/)?.[1];
    expect(packages?.split(' ')).toEqual(['bash', 'bubblewrap', 'ca-certificates']);
    for (const command of ['bash', 'bwrap']) expect(() => execFileSync('which', [command])).not.toThrow();
  });

  it("runs as the base image's ordinary user, whose are the volumes' mount points (decision 0465)", () => {
    const image = stages.at(-1)!;
    expect(image.user).toBe('node');
    expect(image.volumes).toEqual(['/data']);
    // /workspaces: docker-compose.yml's shared volume (KEEL_WORKSPACES_DIR).
    expect(layout).toEqual(['install -d -o node -g node /data /workspaces']);
  });

  it('holds no TypeScript and no development dependency, and starts on JavaScript', async () => {
    const image = stages.at(-1)!;
    const root = stageDirectories.get(image.name)!;
    expect(image.entrypoint.slice(0, 2)).toEqual(['node', 'dist/cli/keel.js']);
    await expect(readFile(path.join(root, 'dist', 'workflow-bundle.js'), 'utf8')).resolves.toContain(
      'conversationWorkflow',
    );
    for (const absent of [
      'node_modules/tsx',
      'node_modules/typescript',
      'common',
      'workflows',
      'cli/keel.ts',
    ])
      await expect(access(path.join(root, absent))).rejects.toThrow(/ENOENT/);
    await expect(access(path.join(root, 'node_modules/@temporalio/worker'))).resolves.toBeUndefined();
  });

  it('runs its worker and its API from its own files, and a turn with a command completes', async () => {
    const image = stages.at(-1)!;
    const root = stageDirectories.get(image.name)!;
    const environment = (container: string): Record<string, string> => {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(image.env)) {
        const volume = image.volumes.find((each) => value === each || value.startsWith(`${each}/`));
        env[key] =
          volume !== undefined
            ? path.join(directory, `${container}-volume`, value.slice(volume.length))
            : value.startsWith(`${image.workdir}/`)
              ? inStage(image, value)
              : value;
      }
      return env;
    };
    const program = { args: image.entrypoint.slice(1), cwd: root };
    const taskQueue = `keel-image-${randomUUID()}`;
    const shared = {
      TEMPORAL_ADDRESS: testAddress(),
      KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
      KEEL_TASK_QUEUE: taskQueue,
    };
    started.push(
      await startWorkerProcess({
        program,
        command: 'worker',
        env: { ...environment('worker'), ...shared },
        readyTimeoutMs: 180_000,
      }),
    );
    const port = await freePort();
    started.push(
      await startWorkerProcess({
        program,
        command: 'api',
        env: { ...environment('api'), ...shared, KEEL_API_HOST: '127.0.0.1', KEEL_API_PORT: String(port) },
      }),
    );
    const base = `http://127.0.0.1:${port}`;
    const thread = await call<{ thread_id: string }>(base, 'POST', '/threads', {});
    const waited = await call<{ messages: { type: string; content: unknown }[] }>(
      base,
      'POST',
      `/threads/${thread.body.thread_id}/runs/wait?timeout_s=120`,
      userInput('run: echo shipped-from-the-image'),
    );
    expect(waited.status).toBe(200);
    const last = waited.body.messages.at(-1);
    expect(last?.type).toBe('ai');
    expect(JSON.stringify(last?.content)).toContain('shipped-from-the-image');
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
  }, 300_000);
});
