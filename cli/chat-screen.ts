/**
 * What `keel chat` draws: lines of conversation, streamed text, and one spinner (on a terminal
 * only). The spinner only ever occupies a line of its own: it starts at the start of an empty
 * line and is cleared before anything else is written, and it is never touched while streamed
 * text is open on the current line. (ora's `stop` moves the cursor to column 0 even when nothing
 * spins; calling it per streamed piece wrote each piece over the one before.)
 */
import ora, { type Ora } from 'ora';
import { styleFor, type Style } from './style';

export type ChatOutput = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export class ChatScreen {
  /** A terminal that can show a spinner; off a terminal the output is the conversation only. */
  readonly interactive: boolean;
  private readonly spinner: Ora;
  /** Streamed text is open on the current line (the cursor follows it). */
  private textOpen = false;
  /** The last character written was a newline: the cursor is at the start of an empty line. */
  private atLineStart = true;
  private activity = '';
  /** Notes that came while text streamed: shown once the text ends, never inside it. */
  private asides: string[] = [];
  private cost = '';

  /** `inputIsTerminal`: a person types (stdin is a terminal), so prompts and a spinner make sense. */
  constructor(
    private readonly output: ChatOutput,
    inputIsTerminal: boolean,
    /** Colour, when the output allows it (cli/style.ts). @default none */
    readonly style: Style = styleFor({}, {}),
  ) {
    // A terminal that reports 0 columns (a fresh pty) makes ora's line counting loop; print
    // plainly there.
    this.interactive = inputIsTerminal && output.isTTY === true && (output.columns ?? 0) > 0;
    this.spinner = ora({
      stream: output,
      discardStdin: false,
      isEnabled: this.interactive,
      isSilent: !this.interactive,
    });
  }

  /** A whole line of conversation (or a note), below whatever was shown before. */
  line(text: string): void {
    this.settle();
    this.write(`${text}\n`);
  }

  /** A note for the reader: now, or, while an answer streams, once its text ends. */
  aside(text: string): void {
    if (this.textOpen) this.asides.push(text);
    else this.line(text);
  }

  /** More of the answer, appended to the open `keel › ` line. */
  text(piece: string): void {
    if (piece === '') return;
    this.hideSpinner();
    if (!this.textOpen) {
      if (!this.atLineStart) this.write('\n');
      this.write(`${this.style.keel('keel ›')} `);
      this.textOpen = true;
    }
    this.write(piece);
  }

  /** The answer in progress is complete: the next output starts on a new line. */
  endText(): void {
    if (!this.textOpen) return;
    this.textOpen = false;
    if (!this.atLineStart) this.write('\n');
    for (const aside of this.asides.splice(0)) this.write(`${aside}\n`);
  }

  /** Shows the spinner with `activity` (and the cost so far), unless text is streaming. */
  busy(activity: string): void {
    this.activity = activity;
    this.spinner.text = `${this.activity}${this.cost}`;
    if (!this.interactive || this.textOpen || this.spinner.isSpinning) return;
    if (!this.atLineStart) this.write('\n');
    this.spinner.start();
  }

  /** The run's cost so far, shown after the spinner's activity. */
  setCost(cost: string): void {
    this.cost = cost;
    this.spinner.text = `${this.activity}${this.cost}`;
  }

  /** Clears the spinner and ends open text: the cursor is at the start of an empty line. */
  settle(): void {
    this.hideSpinner();
    this.endText();
    if (!this.atLineStart) this.write('\n');
  }

  private hideSpinner(): void {
    if (this.spinner.isSpinning) this.spinner.stop();
  }

  private write(text: string): void {
    this.output.write(text);
    this.atLineStart = text.endsWith('\n');
  }
}
