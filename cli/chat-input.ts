/**
 * What `keel chat` reads: messages, and answers to approvals, in the order they were typed.
 *
 * A message may span lines: a line ending in a backslash continues on the next one (on a
 * terminal and piped alike), and on a terminal lines that arrive within `pasteWindowMs` of each
 * other are one message — a paste of several lines is sent as one, while a person pressing Enter
 * sends what they typed. Piped input has no paste: each line (or backslash-joined group) is one
 * message.
 *
 * On a terminal, readline's echo is muted while no prompt is shown: what is typed during a run
 * is kept (and shown with the next prompt) instead of being written into the streamed answer.
 */
import { createInterface, type Interface } from 'node:readline';
import { Writable } from 'node:stream';
import type { ChatOutput } from './chat-screen';

export interface ChatInputOptions {
  input: NodeJS.ReadableStream;
  output: ChatOutput;
  /** A terminal: prompts, echo and Ctrl-C as a key. */
  interactive: boolean;
  /** Ctrl-C was pressed (on a terminal; piped, the process gets SIGINT instead). */
  onInterrupt(): void;
  /** Lines closer together than this are one message (a paste); terminals only. @default 40 */
  pasteWindowMs?: number;
}

/** Forwards to the terminal unless muted; readline reads its size through it. */
class MutableOutput extends Writable {
  muted = true;
  readonly isTTY = true;

  constructor(private readonly target: ChatOutput) {
    super();
    target.on('resize', () => this.emit('resize'));
  }

  get columns(): number | undefined {
    return this.target.columns;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.muted) this.target.write(chunk);
    callback();
  }
}

export class ChatInput {
  private readonly readline: Interface;
  private readonly echo: MutableOutput | undefined;
  private readonly entries: string[] = [];
  private readonly pending: string[] = [];
  private waiting: ((entry: string | undefined) => void) | undefined;
  private pasteTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly pasteWindowMs: number;

  constructor(private readonly options: ChatInputOptions) {
    this.pasteWindowMs = options.pasteWindowMs ?? 40;
    this.echo = options.interactive ? new MutableOutput(options.output) : undefined;
    this.readline = createInterface({
      input: options.input,
      ...(this.echo === undefined ? {} : { output: this.echo }),
      terminal: options.interactive,
    });
    this.readline.on('line', (line) => this.onLine(line));
    this.readline.on('close', () => {
      clearTimeout(this.pasteTimer);
      if (this.pending.length > 0) this.flush();
      this.closed = true;
      this.deliver(undefined);
    });
    this.readline.on('SIGINT', () => options.onInterrupt());
  }

  /** Input has ended and every entry was read. */
  get ended(): boolean {
    return this.closed && this.entries.length === 0;
  }

  /** The next message or answer, after showing `prompt` on a terminal; undefined once input ends. */
  async next(prompt: string): Promise<string | undefined> {
    const queued = this.entries.shift();
    if (queued !== undefined) {
      // Typed ahead (or piped): shown as if typed at this prompt.
      if (this.echo !== undefined) this.options.output.write(`${prompt}${queued}\n`);
      return queued;
    }
    if (this.closed) return undefined;
    if (this.echo !== undefined) {
      this.echo.muted = false;
      this.readline.setPrompt(prompt);
      this.readline.prompt(true);
    }
    try {
      return await new Promise<string | undefined>((resolve) => (this.waiting = resolve));
    } finally {
      if (this.echo !== undefined) this.echo.muted = true;
    }
  }

  /** Redraws the prompt (a countdown in it changed), keeping what was typed so far. */
  refreshPrompt(prompt: string): void {
    if (this.echo === undefined || this.echo.muted) return;
    this.options.output.write('\r\u001b[2K');
    this.readline.setPrompt(prompt);
    this.readline.prompt(true);
  }

  /** Stops a `next` in progress as if input had ended there (Ctrl-C during a prompt). */
  cancelWait(): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    if (this.echo !== undefined) this.options.output.write('\n');
    resolve?.(undefined);
  }

  close(): void {
    clearTimeout(this.pasteTimer);
    this.readline.close();
  }

  private onLine(line: string): void {
    if (line.endsWith('\\')) {
      this.pending.push(line.slice(0, -1));
      if (this.echo !== undefined && !this.echo.muted) {
        this.readline.setPrompt('  … ');
        this.readline.prompt(true);
      }
      return;
    }
    this.pending.push(line);
    if (this.echo === undefined || this.pasteWindowMs <= 0) return this.flush();
    clearTimeout(this.pasteTimer);
    this.pasteTimer = setTimeout(() => this.pasteEnded(), this.pasteWindowMs);
  }

  /** A paste whose last line had no newline is still being edited: it joins the message on Enter. */
  private pasteEnded(): void {
    if (this.readline.line !== '') return;
    this.flush();
  }

  private flush(): void {
    const entry = this.pending.splice(0).join('\n');
    this.deliver(entry);
  }

  private deliver(entry: string | undefined): void {
    const resolve = this.waiting;
    if (resolve !== undefined) {
      this.waiting = undefined;
      resolve(entry);
    } else if (entry !== undefined) this.entries.push(entry);
  }
}
