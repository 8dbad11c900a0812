/**
 * The extension host: starts every server in the extensions file, puts their tools in the
 * worker's registry (named `<server>__<tool>`, flagged from the file), and stops, disables or
 * reloads them. A change to the file (or `reload()`, which the worker calls on SIGHUP) restarts
 * what changed.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { ToolRegistry } from '../tools/registry';
import { isReadOnly, readExtensionsFile, type ExtensionServerConfig } from './config';
import { ExtensionServer, type ExtensionLogger, type ExtensionTool, type ShutdownReason } from './server';

const toolName = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ExtensionHostOptions {
  file: string;
  registry: ToolRegistry;
  logger: ExtensionLogger;
  /** What server processes inherit (PATH, locale from the config), under each server's own `env`. */
  environment: Record<string, string>;
  /** Reload when the file changes. @default true */
  watchFile?: boolean;
}

export class ExtensionHost {
  readonly #servers = new Map<string, ExtensionServer>();
  #watcher: FSWatcher | undefined;
  #reloading: Promise<void> = Promise.resolve();

  private constructor(private readonly options: ExtensionHostOptions) {}

  /** Reads the file and starts its servers; an unreadable file fails the worker's start. */
  static async start(options: ExtensionHostOptions): Promise<ExtensionHost> {
    const host = new ExtensionHost(options);
    await host.#apply();
    if (options.watchFile ?? true) {
      let timer: NodeJS.Timeout | undefined;
      host.#watcher = watch(options.file, () => {
        clearTimeout(timer);
        timer = setTimeout(() => void host.reload(), 200);
      });
    }
    return host;
  }

  servers(): ReadonlyMap<string, ExtensionServer> {
    return this.#servers;
  }

  /** Re-reads the file: new servers start, removed or disabled ones stop, changed ones restart. */
  reload(): Promise<void> {
    this.#reloading = this.#reloading.then(() =>
      this.#apply().catch((error: unknown) =>
        this.options.logger.error(
          { error: String(error) },
          'extensions file not reloaded; keeping the running set',
        ),
      ),
    );
    return this.#reloading;
  }

  /** Stops every server (worker shutdown). */
  async stop(): Promise<void> {
    this.#watcher?.close();
    await this.#reloading;
    await Promise.all([...this.#servers.keys()].map((name) => this.#stopServer(name, 'closing')));
  }

  async #apply(): Promise<void> {
    const { servers } = await readExtensionsFile(this.options.file);
    const stops: Array<Promise<void>> = [];
    for (const [name, running] of this.#servers) {
      const wanted = servers[name];
      if (wanted === undefined || wanted.disabled) stops.push(this.#stopServer(name, 'disabled'));
      else if (JSON.stringify(wanted) !== JSON.stringify(running.config))
        stops.push(this.#stopServer(name, 'reload'));
    }
    await Promise.all(stops);
    const starts: Array<Promise<void>> = [];
    for (const [name, config] of Object.entries(servers))
      if (!config.disabled && !this.#servers.has(name)) starts.push(this.#startServer(name, config));
    await Promise.all(starts);
  }

  #startServer(name: string, config: ExtensionServerConfig): Promise<void> {
    const server = new ExtensionServer(name, config, this.options.environment, this.options.logger, (tools) =>
      this.#register(server, tools),
    );
    this.#servers.set(name, server);
    return server.start();
  }

  async #stopServer(name: string, reason: ShutdownReason): Promise<void> {
    const server = this.#servers.get(name);
    if (server === undefined) return;
    this.#servers.delete(name);
    this.options.registry.removeSource(name);
    await server.stop(reason);
  }

  #register(server: ExtensionServer, tools: ExtensionTool[]): void {
    const { registry, logger } = this.options;
    registry.removeSource(server.name);
    for (const tool of tools) {
      const name = `${server.name}__${tool.name}`;
      if (!toolName.test(name)) {
        logger.warn(
          { extension: server.name, tool: tool.name },
          'tool skipped: its name is not a valid tool name',
        );
        continue;
      }
      registry.add({
        descriptor: {
          name,
          description: tool.description ?? '',
          input_schema: {
            type: 'object',
            properties: tool.inputSchema.properties ?? {},
            ...(tool.inputSchema.required === undefined ? {} : { required: tool.inputSchema.required }),
          },
          sideEffects: !isReadOnly(server.config, tool.name),
          sensitive: server.config.sensitive,
          source: server.name,
        },
        run: (input, context) => server.call(tool.name, input, context.signal),
      });
    }
  }
}
