/**
 * A real terminal for CLI tests: tmux runs the command in a pseudo-terminal of a fixed size, and
 * `capture-pane` reads back what the screen shows — after every carriage return, cursor move and
 * line clear was applied, as a person would see it (a byte log would hide text written over other
 * text). Each terminal has its own tmux server socket, so tests never touch anyone's tmux.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class TmuxTerminal {
  private constructor(private readonly socket: string) {}

  /** Starts `command` (a shell command line) in a `columns`×`rows` terminal; its exit code is shown as `[exited N]`. */
  static async start(command: string, { columns = 100, rows = 50 } = {}): Promise<TmuxTerminal> {
    const terminal = new TmuxTerminal(`keel-test-${randomUUID().slice(0, 8)}`);
    await terminal.tmux(
      'new-session',
      '-d',
      '-x',
      String(columns),
      '-y',
      String(rows),
      `${command}; echo "[exited $?]"; sleep 600`,
    );
    return terminal;
  }

  /** The screen and its scrollback, wrapped lines joined, trailing blanks dropped. */
  async screen(): Promise<string> {
    const { stdout } = await this.tmux('capture-pane', '-p', '-J', '-S', '-', '-E', '-');
    return stdout
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .trimEnd();
  }

  /** The screen as `screen()` reads it, with its colour escape codes kept. */
  async screenWithEscapes(): Promise<string> {
    const { stdout } = await this.tmux('capture-pane', '-p', '-e', '-J', '-S', '-', '-E', '-');
    return stdout.trimEnd();
  }

  /** Types text as keystrokes (no Enter). */
  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-l', text);
  }

  /** Presses keys by tmux name: `Enter`, `C-c`. */
  async press(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', ...keys);
  }

  /** Pastes text the way a terminal does: all at once, newlines as Enter. */
  async paste(text: string): Promise<void> {
    await this.tmux('set-buffer', '--', text);
    await this.tmux('paste-buffer', '-d');
  }

  /** Waits until the screen matches; returns the screen. */
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await this.screen();
      if (pattern.test(screen)) return screen;
      await sleep(150);
    }
    throw new Error(`timed out waiting for ${pattern} on the terminal; it shows:\n${screen}`);
  }

  async close(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
  }

  private tmux(...args: string[]): Promise<{ stdout: string }> {
    return run('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], {
      env: { ...process.env, TERM: 'xterm-256color' },
    });
  }
}
