/**
 * `keel up` (`npm start`): the whole system on this machine. Starts the Temporal dev server
 * (unless TEMPORAL_ADDRESS points elsewhere), the worker and the API; prints where they are;
 * on Ctrl-C, SIGTERM, SIGHUP or a closed output (`npm start | tee`, then `tee` ends) stops them in
 * order: API, worker (draining), server. Should `keel up` itself die, each process's watchdog
 * stops it (decision 0330): nothing it started outlives it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeSandbox } from '../activities/tools/bash';
import { Sandbox } from '../activities/tools/sandbox';
import { stopCommandRunner } from '../activities/tools/command-runner';
import { temporalAddress, type KeelConfig } from '../platform/config';
import { loadEncryptionKeys } from '../codec/keys';
import { buildWorkflowBundle } from '../worker/bundle';
import { waitForTemporal } from './dev-server';
import { keepDevServer, type KeptDevServer } from './dev-server-keeper';
import { childProcessEnvironment } from './env';
import { type PortUse, requireFreePorts } from './free-ports';
import { Supervised, whenShutDown } from './supervisor';
import { modelBanner } from './model-banner';
import { keelCommandArgs, packageRoot } from '../platform/package-root';
import { ensureTemporalCli } from './temporal-cli';

/** Signals closer together than this are one signal delivered twice (npm forwards what the terminal sent). */
const sameSignalMs = 1_000;
/** The signals that end `keel up`: Ctrl-C, a stop, a closed terminal. */
export const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** A path as the user is likely to recognise it: relative below the current directory, else absolute. */
export function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') ? file : relative;
}

const output: { gone: boolean; onGone: (() => void) | undefined } = { gone: false, onGone: undefined };

/**
 * Ends `keel up` when its output is gone: a write to stdout failed (EPIPE once `tee` ended, ENOSPC
 * on a full disk). Nothing more is written; `onGone` runs once. Without a handler the failed
 * write would crash `keel up` and leave its processes to their watchdogs.
 */
export function stopWhenOutputIsGone(onGone: () => void): void {
  output.onGone = onGone;
  const lost = (): void => {
    if (output.gone) return;
    output.gone = true;
    output.onGone?.();
  };
  process.stdout.on('error', lost);
  // Stderr is the terminal's or the same pipe: its failure is noted, never raised.
  process.stderr.on('error', () => undefined);
}

/** Writes to stdout while it is there (children's output is relayed through this). */
export function relay(chunk: Buffer | string): void {
  if (!output.gone) process.stdout.write(chunk);
}

export function say(line: string): void {
  relay(`${line}\n`);
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
  if (failed()) return;
  throw new Error(`Keel did not become ready within ${timeoutMs / 1000} s: ${last}`);
}

/** Resolves once `url` answers 200 (a Web UI serving its page), or throws after `timeoutMs`. */
export async function waitForPage(
  name: string,
  url: string,
  timeoutMs: number,
  failed: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline && !failed()) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(300);
  }
  if (failed()) return;
  throw new Error(`${name} at ${url} did not answer within ${timeoutMs / 1000} s (${last})`);
}

/** The API's port, as `keel up` and `keel up --cluster` check it. */
export function apiPortUse(config: KeelConfig): PortUse {
  return {
    host: config.api.host,
    port: config.api.port,
    whose: "the API's port",
    remedy: 'stop what listens there (another `npm start`?), or set KEEL_API_PORT to another port',
  };
}

/** The workers' metrics ports, as `keel up` and `keel up --cluster` check them. */
export function metricsPortUses(endpoints: { host: string; port: number }[]): PortUse[] {
  return endpoints.map(({ host, port }) => ({
    host,
    port,
    whose: "the worker's metrics port",
    remedy: 'stop what listens there, set KEEL_WORKER_METRICS_PORT to another port, or to off',
  }));
}

/** A metrics endpoint's address as the banner prints it. */
export function metricsUrl({ host, port }: { host: string; port: number }): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`;
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
  // On by default here: one worker, one port (issue 36); `KEEL_WORKER_METRICS_PORT=off` turns it off.
  const metrics = config.telemetry.launchedWorkerMetrics;
  let server: KeptDevServer | undefined;
  const children: Supervised[] = [];
  /** Set once shutdown begins; resolves with the exit code. */
  const shutdown: { done?: Promise<number>; at: number } = { at: 0 };
  /** Read through a function: shutdown can begin during any await. */
  const shuttingDown = (): Promise<number> | undefined => shutdown.done;

  /** The server, once started: stopping may begin while it starts, so it is stopped where it is started too. */
  const stopServer = async (): Promise<void> => {
    await server?.stop(15_000);
    server = undefined;
  };
  const stopAll = async (code: number): Promise<number> => {
    if (server === undefined && children.length === 0) return code;
    say('Stopping Keel: API, then worker (draining in-flight work), then Temporal…');
    const [worker, api] = children;
    await api?.stop(15_000);
    await worker?.stop((config.shutdownGraceS + 10) * 1000);
    await stopServer();
    say(`Keel stopped. Threads are kept in ${shown(config.dataDir)}`);
    return code;
  };
  const beginStop = (code: number): void => {
    if (shutdown.done !== undefined) return;
    shutdown.at = Date.now();
    shutdown.done = stopAll(code);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shutdown.done === undefined) return beginStop(0);
    if (Date.now() - shutdown.at < sameSignalMs) return;
    say(`${signal} again: stopping at once.`);
    for (const child of children) child.kill();
    server?.kill();
    process.exit(1);
  };
  for (const signal of stopSignals) process.on(signal, onSignal);
  stopWhenOutputIsGone(() => beginStop(0));

  try {
    // Before anything starts: another API on the port would answer our readiness check, another
    // Temporal would be attached to as if it were ours.
    await requireFreePorts([
      apiPortUse(config),
      ...(config.temporal.address === undefined
        ? [
            {
              host: '127.0.0.1',
              port: config.temporal.devServerPort,
              whose: "the Temporal server's gRPC port",
              remedy:
                'stop what listens there (another `npm start`?), set KEEL_TEMPORAL_PORT to another port, or set TEMPORAL_ADDRESS to use that server',
            },
            {
              host: '127.0.0.1',
              port: config.temporal.devServerUiPort,
              whose: "the Temporal Web UI's port",
              remedy:
                'stop what listens there (another `npm start`?), or set KEEL_TEMPORAL_UI_PORT to another port',
            },
          ]
        : []),
      ...metricsPortUses(metrics === undefined ? [] : [metrics]),
    ]);
    if (config.temporal.address === undefined) {
      const cliPath = await ensureTemporalCli(config, say);
      say(`Starting the Temporal dev server (${cliPath})…`);
      server = await keepDevServer({
        cliPath,
        stallMs: config.temporal.devServerStallS * 1000,
        report: (line) => say(line),
        dataDir: config.dataDir,
        port: config.temporal.devServerPort,
        uiPort: config.temporal.devServerUiPort,
        namespace: config.temporal.namespace,
        uiCodecEndpoint: codecEndpoint,
        onOutput: (line) => say(`[temporal] ${line}`),
      });
      if (shuttingDown() !== undefined) await stopServer();
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
    // The probe ran its command in a runner of this process's own: ended now, and waited for, so
    // it cannot outlive `keel up` by the moment it takes to notice its parent has gone.
    await stopCommandRunner();
    if (!sandbox.ok) say(sandbox.line);

    say('Bundling workflow code…');
    const bundlePath = path.join(config.dataDir, 'workflow-bundle.js');
    await writeFile(bundlePath, await buildWorkflowBundle());

    const env = childProcessEnvironment({
      KEEL_WORKFLOW_BUNDLE: bundlePath,
      KEEL_LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json',
      KEEL_DATA_DIR: config.dataDir,
      KEEL_WORKER_METRICS_PORT: metrics === undefined ? 'off' : String(metrics.port),
      ...(uiToken === undefined ? {} : { KEEL_CODEC_UI_TOKEN: uiToken }),
    });
    const spawnKeel = (name: string, command: string, graceMs: number) =>
      new Supervised({
        name,
        command: process.execPath,
        args: keelCommandArgs(command),
        cwd: packageRoot,
        env,
        report: say,
        // Through this process, so that a closed output is noticed here.
        output: relay,
        graceMs,
        onRefused: () => beginStop(1),
      });
    const worker = spawnKeel('worker', 'worker', (config.shutdownGraceS + 10) * 1000);
    const api = spawnKeel('API', 'api', 15_000);
    children.push(worker, api);
    worker.start();
    api.start();

    const stopped = () => shuttingDown() !== undefined;
    await waitForReady(apiUrl, 120_000, stopped);
    if (server !== undefined) await waitForPage('The Temporal Web UI', server.uiUrl, 60_000, stopped);
    if (metrics !== undefined)
      await waitForPage("The worker's metrics", metricsUrl(metrics), 60_000, stopped);
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
    if (metrics !== undefined)
      say(
        `  Metrics   ${metricsUrl(metrics)}   (the worker's: runs, cost, tokens, tools; the API's: ${apiUrl}/metrics)`,
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
    beginStop(1);
    return (await shuttingDown()) ?? 1;
  }
  return whenShutDown(shuttingDown);
}
