/**
 * `keel up` (`npm start`): the whole system on this machine. Starts the Temporal dev server
 * (unless TEMPORAL_ADDRESS points elsewhere), the worker and the API; prints where they are;
 * on Ctrl-C or SIGTERM stops them in order: API, worker (draining), server.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeSandbox } from '../activities/tools/bash';
import { Sandbox } from '../activities/tools/sandbox';
import { temporalAddress, type KeelConfig } from '../common/config';
import { loadEncryptionKeys } from '../codec/keys';
import { buildWorkflowBundle } from '../worker/bundle';
import { type DevServer, startDevServer, waitForTemporal } from './dev-server';
import { childProcessEnvironment } from './env';
import { Supervised } from './supervisor';
import { modelBanner } from './model-banner';
import { keelCommandArgs, packageRoot } from './package-root';
import { ensureTemporalCli } from './temporal-cli';

/** Signals closer together than this are one signal delivered twice (npm forwards what the terminal sent). */
const sameSignalMs = 1_000;

/** A path as the user is likely to recognise it: relative below the current directory, else absolute. */
export function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') ? file : relative;
}

export function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

export async function waitForReady(url: string, timeoutMs: number, failed: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline && !failed()) {
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) return;
      last = ((await response.json()) as { detail?: string }).detail ?? `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(300);
  }
  throw new Error(`Keel did not become ready within ${timeoutMs / 1000} s: ${last}`);
}

/** Fails with what to do when something already listens on the API's address. */
export async function requireFreePort(host: string, port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} on ${host} is in use (another \`npm start\`?): stop it, or set KEEL_API_PORT to another port`,
            )
          : error,
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

export async function up(config: KeelConfig): Promise<number> {
  await mkdir(config.dataDir, { recursive: true });
  // Generated here on the embedded default, before the worker and the API race to read it.
  const [encryptionKey] = await loadEncryptionKeys(config.encryption);
  const apiUrl = `http://${config.api.host}:${config.api.port}`;
  // With API tokens the Web UI cannot authenticate to /codec: it gets an endpoint with a secret
  // of its own, made for this start unless the operator set one (decision 0087).
  const uiToken =
    config.api.tokens.length === 0
      ? undefined
      : (config.encryption.uiToken ?? randomBytes(32).toString('base64url'));
  const codecEndpoint = uiToken === undefined ? `${apiUrl}/codec` : `${apiUrl}/codec/ui/${uiToken}`;
  let server: DevServer | undefined;
  const children: Supervised[] = [];
  /** Set once shutdown begins; resolves with the exit code. */
  const shutdown: { done?: Promise<number>; at: number } = { at: 0 };
  /** Read through a function: shutdown can begin during any await. */
  const shuttingDown = (): Promise<number> | undefined => shutdown.done;

  const stopAll = async (): Promise<number> => {
    say('Stopping Keel: API, then worker (draining in-flight work), then Temporal…');
    const [worker, api] = children;
    await api?.stop(15_000);
    await worker?.stop((config.shutdownGraceS + 10) * 1000);
    await server?.stop(15_000);
    say(`Keel stopped. Threads are kept in ${shown(config.dataDir)}`);
    return 0;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    const now = Date.now();
    if (shutdown.done === undefined) {
      shutdown.at = now;
      shutdown.done = stopAll();
      return;
    }
    if (now - shutdown.at < sameSignalMs) return;
    say(`${signal} again: stopping at once.`);
    for (const child of children) child.kill();
    server?.process.kill('SIGKILL');
    process.exit(1);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    // Before anything starts: another API on the port would answer our readiness check.
    await requireFreePort(config.api.host, config.api.port);
    if (config.temporal.address === undefined) {
      const cliPath = await ensureTemporalCli(config, say);
      say(`Starting the Temporal dev server (${cliPath})…`);
      server = await startDevServer({
        cliPath,
        dataDir: config.dataDir,
        port: config.temporal.devServerPort,
        uiPort: config.temporal.devServerUiPort,
        namespace: config.temporal.namespace,
        uiCodecEndpoint: codecEndpoint,
        onOutput: (line) => say(`[temporal] ${line}`),
      });
    } else {
      say(`Using the Temporal server at ${config.temporal.address}…`);
      await waitForTemporal(config.temporal.address, 15_000);
    }
    const early = shuttingDown();
    if (early !== undefined) return await early;

    const sandbox = await describeSandbox(
      new Sandbox(config.sandbox, config.childEnvironment.PATH),
      config.sandbox.network,
    );
    if (!sandbox.ok) say(sandbox.line);

    say('Bundling workflow code…');
    const bundlePath = path.join(config.dataDir, 'workflow-bundle.js');
    await writeFile(bundlePath, await buildWorkflowBundle());

    const env = childProcessEnvironment({
      KEEL_WORKFLOW_BUNDLE: bundlePath,
      KEEL_LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json',
      KEEL_DATA_DIR: config.dataDir,
      ...(uiToken === undefined ? {} : { KEEL_CODEC_UI_TOKEN: uiToken }),
    });
    const spawnKeel = (name: string, command: string) =>
      new Supervised({
        name,
        command: process.execPath,
        args: keelCommandArgs(command),
        cwd: packageRoot,
        env,
        report: say,
      });
    const worker = spawnKeel('worker', 'worker');
    const api = spawnKeel('API', 'api');
    children.push(worker, api);
    worker.start();
    api.start();

    await waitForReady(apiUrl, 120_000, () => shuttingDown() !== undefined);
    const stoppedWhileStarting = shuttingDown();
    if (stoppedWhileStarting !== undefined) return await stoppedWhileStarting;
    say('');
    say('Keel is running.');
    say(`  API       ${apiUrl}   (OpenAPI: ${apiUrl}/openapi.json)`);
    say(`  Chat      ${apiUrl}/   (the web chat: open it in a browser)`);
    say(
      `  Temporal  ${temporalAddress(config)}${server === undefined ? '' : `   (dev server, data in ${shown(server.databaseFile)})`}`,
    );
    if (server !== undefined)
      say(
        `  Web UI    ${server.uiUrl}   (decrypts through ${apiUrl}/codec${uiToken === undefined ? '' : '/ui/… with its own token'})`,
      );
    say(
      `  Encrypted with key "${encryptionKey?.id}"${config.encryption.keys === undefined ? ` (from ${shown(config.encryption.keyFile)})` : ' (KEEL_ENCRYPTION_KEYS)'}`,
    );
    say(`  Model     ${modelBanner(config)}`);
    say(
      `  Sandbox   ${sandbox.ok ? sandbox.line : config.sandbox.mode === 'off' ? 'OFF (unconfined)' : 'unavailable (see above)'}`,
    );
    say('');
    say(
      `  Try:  curl -s -X POST ${apiUrl}/threads -H 'content-type: application/json' -d '{"thread_id":"demo"}'`,
    );
    say(`        curl -s -X POST ${apiUrl}/threads/demo/runs/wait -H 'content-type: application/json' \\`);
    say(`          -d '{"input":{"messages":[{"role":"user","content":"run: uname -a"}]}}'`);
    say('');
    say('Ctrl-C stops everything; conversations are kept.');
  } catch (error) {
    say(`keel up failed: ${error instanceof Error ? error.message : String(error)}`);
    shutdown.done ??= stopAll();
    await shutdown.done;
    return 1;
  }
  return new Promise<number>((resolve) => {
    const check = setInterval(() => {
      const done = shuttingDown();
      if (done === undefined) return;
      clearInterval(check);
      void done.then(resolve);
    }, 200);
  });
}
