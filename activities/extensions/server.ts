/**
 * One extension: a tool server run as a child process that speaks MCP (JSON-RPC 2.0 over stdio)
 * through the official SDK client. It is restarted with backoff when it dies; a call that was in
 * flight then fails in-band. Stopping follows Keel's protocol: `shutdown` with a reason, up to
 * 5 s for the answer, then the SDK closes stdin, sends SIGTERM and finally SIGKILL. A message
 * longer than `maxMessageBytes` (a server that never ends its reply) is not buffered further:
 * the server is closed and restarted, and the call in flight fails in-band saying why.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ToolOutcome } from '../../common/tools';
import type { ExtensionServerConfig } from './config';

export type ShutdownReason = 'closing' | 'disabled' | 'reload' | 'error';

export interface ExtensionLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ExtensionTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
}

/** How long Keel waits for the answer to `shutdown` before closing the server the MCP way. */
export const shutdownAnswerMs = 5_000;
/** A call waits this long for a restarting server before it fails in-band. */
const readyWaitMs = 10_000;
/** Tool calls are bounded by the activity, not by the SDK's 60 s default. */
const callTimeoutMs = 14 * 60_000;
const maxBackoffMs = 30_000;
/** A server that stayed up this long starts its backoff afresh after a crash. */
const stableAfterMs = 30_000;

const version = '0.1.0';
/**
 * The longest message a server may send. Tool results are cut to `toolOutputChars` (200,000
 * characters) anyway; this bounds what the worker holds before the cut, per server.
 */
export const maxMessageBytes = 4 * 1024 * 1024;
/** The SDK's words when a message outgrows its read buffer (shared/stdio.js `ReadBuffer`). */
const overflowed = /ReadBuffer exceeded maximum size/;

export class ExtensionServer {
  #client: Client | undefined;
  #ready: Promise<Client | undefined>;
  #markReady: (client: Client | undefined) => void = () => undefined;
  #stopping = false;
  #failures = 0;
  #startedAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  /** Clients whose server was closed for a message past `maxMessageBytes`. */
  readonly #flooded = new WeakSet<Client>();

  constructor(
    readonly name: string,
    readonly config: ExtensionServerConfig,
    private readonly environment: Record<string, string>,
    private readonly logger: ExtensionLogger,
    /** Called with the server's tools each time it (re)starts. */
    private readonly onTools: (tools: ExtensionTool[]) => void,
  ) {
    this.#ready = this.#nextReady();
  }

  /** The child's pid while it runs (tests use it to prove nothing survives). */
  pid: number | null = null;

  /** Starts the server; a failure is logged and retried with backoff, never thrown. */
  async start(): Promise<void> {
    const transport = new StdioClientTransport({
      command: this.config.command,
      args: this.config.args,
      env: { ...this.environment, ...this.config.env },
      ...(this.config.cwd === undefined ? {} : { cwd: this.config.cwd }),
      stderr: 'inherit',
      maxBufferSize: maxMessageBytes,
    });
    const client = new Client({ name: 'keel', version });
    client.onclose = () => {
      if (this.#client === client) this.#crashed();
    };
    client.onerror = (error) => {
      if (!overflowed.test(error.message)) return;
      this.#flooded.add(client);
      this.logger.warn(
        { extension: this.name, pid: this.pid, max_bytes: maxMessageBytes },
        'extension sent a message past the limit; closing it',
      );
    };
    try {
      await client.connect(transport);
      this.pid = transport.pid;
      const { tools } = await client.listTools();
      if (this.#stopping) {
        await client.close();
        return;
      }
      this.#client = client;
      this.#startedAt = Date.now();
      this.onTools(tools as ExtensionTool[]);
      this.logger.info({ extension: this.name, pid: this.pid, tools: tools.length }, 'extension started');
      this.#markReady(client);
    } catch (error) {
      this.logger.error({ extension: this.name, error: String(error) }, 'extension failed to start');
      await client.close().catch(() => undefined);
      this.#scheduleRestart();
    }
  }

  async call(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    const client = await Promise.race([
      this.#ready,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), readyWaitMs).unref()),
    ]);
    if (client === undefined)
      return {
        is_error: true,
        content: `Extension "${this.name}" is not running; its tool "${tool}" was not run.`,
      };
    try {
      const result = await client.callTool({ name: tool, arguments: input }, undefined, {
        signal,
        timeout: callTimeoutMs,
      });
      return { is_error: result.isError === true, content: textOf(result.content) };
    } catch (error) {
      if (signal.aborted) throw error;
      if (
        error instanceof McpError &&
        error.code === Number(ErrorCode.ConnectionClosed) &&
        this.#flooded.has(client)
      )
        return {
          is_error: true,
          content: `Extension "${this.name}" sent more than ${maxMessageBytes / 1024 / 1024} MiB without ending its message during the call to "${tool}"; Keel closed it and restarts it. The tool may have partly run.`,
        };
      if (error instanceof McpError && error.code === Number(ErrorCode.ConnectionClosed))
        return {
          is_error: true,
          content: `Extension "${this.name}" stopped during the call to "${tool}" (it crashed and is being restarted); the tool may have partly run.`,
        };
      return {
        is_error: true,
        content: `Extension "${this.name}" failed "${tool}": ${(error as Error).message}`,
      };
    }
  }

  /** Asks the server to shut down, then closes it the MCP way whatever it answered. */
  async stop(reason: ShutdownReason): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    const client = this.#client;
    this.#client = undefined;
    this.#markReady(undefined);
    if (client === undefined) return;
    const startedAt = Date.now();
    let answer = 'acknowledged';
    try {
      await client.request({ method: 'shutdown', params: { reason } }, z.looseObject({}), {
        timeout: shutdownAnswerMs,
      });
    } catch (error) {
      answer =
        error instanceof McpError && error.code === Number(ErrorCode.MethodNotFound)
          ? 'method not found'
          : error instanceof McpError && error.code === Number(ErrorCode.RequestTimeout)
            ? 'no answer'
            : `failed: ${(error as Error).message}`;
    }
    await client.close();
    // The SDK sends SIGKILL last without waiting for it: a stop ends when the process is gone.
    await exited(this.pid);
    this.logger.info(
      { extension: this.name, reason, answer, pid: this.pid, stop_ms: Date.now() - startedAt },
      'extension stopped',
    );
  }

  #nextReady(): Promise<Client | undefined> {
    return new Promise((resolve) => {
      this.#markReady = resolve;
    });
  }

  #crashed(): void {
    this.#client = undefined;
    if (this.#stopping) return;
    this.logger.warn({ extension: this.name, pid: this.pid }, 'extension exited unexpectedly; restarting');
    if (Date.now() - this.#startedAt > stableAfterMs) this.#failures = 0;
    this.#ready = this.#nextReady();
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    if (this.#stopping) return;
    const delayMs = Math.min(maxBackoffMs, 500 * 2 ** this.#failures);
    this.#failures++;
    this.#restartTimer = setTimeout(() => void this.start(), delayMs);
  }
}

async function exited(pid: number | null): Promise<void> {
  for (let waited = 0; pid !== null && waited < 5_000; waited += 50) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Text blocks become the result; anything else (images, resources) is summarised as JSON. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((block: { type?: string; text?: string }) =>
      block.type === 'text' && typeof block.text === 'string' ? block.text : JSON.stringify(block),
    )
    .join('\n');
}
