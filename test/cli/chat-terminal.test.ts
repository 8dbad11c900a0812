/**
 * `keel chat` as a person sees it: on a real terminal (tmux, the screen read back after every
 * cursor move was applied) and piped (the output is the conversation, nothing else), against a
 * real API, worker and dev server with the scripted models.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { RunningApi } from '../../api/server';
import type { Run } from '../../common/run';
import { apiHarness, call } from '../helpers/api';
import { TmuxTerminal } from '../helpers/terminal';

jest.setTimeout(120_000);

const keel = 'node --import tsx cli/keel.ts';

/** What the scripted model answers to a message without tool lines. */
const scriptedReply = (text: string) =>
  `(Scripted model, offline — not a real model.) You said: “${text}”. ` +
  'Write lines like "run: ls -la", "read: notes.md", "write: notes.md: hello", "delete: notes.md" or "think: 2" and I will use tools. ' +
  'Set ANTHROPIC_API_KEY to talk to Claude.';

const count = (text: string, part: string) => text.split(part).length - 1;

/** The escape character that starts a colour code. */
const escape = String.fromCharCode(27);

/** The part of the screen after the last line that starts with `marker`. */
const after = (screen: string, marker: string) => screen.slice(screen.lastIndexOf(marker));

/** Runs `keel chat` with `stdin` piped in; resolves with what it printed and its exit code. */
function pipedChat(
  args: string[],
  stdin: string,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('node', ['--import', 'tsx', 'cli/keel.ts', ...args], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
    child.stdin.end(stdin);
  });
}

describe('keel chat', () => {
  beforeAll(async () => {
    await promisify(execFile)('tmux', ['-V']);
  });
  const harness = apiHarness();
  let api: RunningApi;
  beforeAll(() => {
    api = harness.api;
  });

  describe('on a terminal', () => {
    let terminal: TmuxTerminal | undefined;
    afterEach(async () => {
      await terminal?.close();
      terminal = undefined;
    });

    const open = async (flags = '', threadId = `tty-${randomUUID()}`, env = '') => {
      terminal = await TmuxTerminal.start(
        `${env}${keel} --url ${api.url} chat ${threadId} --model scripted:typewriter ${flags}`,
      );
      await terminal.waitFor(/you ›$/);
      return terminal;
    };

    it('keeps local commands from the model: /help lists them, an unknown one is refused, /exit leaves', async () => {
      const threadId = `tty-${randomUUID()}`;
      const screen = await open('', threadId);
      await screen.type('/help');
      await screen.press('Enter');
      let shown = await screen.waitFor(/Commands \(never sent to the model\):[\s\S]*you ›$/);
      for (const name of ['/help', '/history', '/status', '/approve', '/deny', '/exit'])
        expect(after(shown, 'Commands')).toContain(name);
      await screen.type('/frobnicate now');
      await screen.press('Enter');
      await screen.waitFor(/\/frobnicate is not a command[^\n]*\n+you ›$/);
      await screen.type('/approve');
      await screen.press('Enter');
      await screen.waitFor(/no pending approvals\n+you ›$/);
      await screen.type('/exit');
      await screen.press('Enter');
      shown = await screen.waitFor(/\[exited \d+\]/);
      expect(shown).toContain('[exited 0]');
      // None of it became a run: the model never saw a word.
      const runs = await call<Run[]>(api.url, 'GET', `/threads/${threadId}/runs`);
      expect(runs.body).toEqual([]);
      expect(shown).not.toContain('You said');
    });

    it('shows a tool call as its command and the first lines of its output, folded when long', async () => {
      const screen = await open();
      await screen.type('run: seq 1 40');
      await screen.press('Enter');
      const shown = await screen.waitFor(/\[run \d+ tokens[^\n]*\n+you ›$/);
      const call = after(shown, '⚙ $ seq 1 40');
      expect(call).toMatch(
        /^⚙ \$ seq 1 40\n {4}│ 1\n {4}│ 2\n {4}│ 3\n {4}│ 4\n {4}│ 5\n {4}│ … 35 more lines\n/,
      );
      expect(call).not.toContain('│ 6');
    });

    it('prints the thread so far when it resumes a thread, tool output included', async () => {
      const threadId = `tty-${randomUUID()}`;
      const first = await pipedChat(
        ['--url', api.url, 'chat', threadId],
        'run: echo resumed-output\nand a word\n',
      );
      expect(first.code).toBe(0);
      const screen = await open('', threadId);
      const shown = await screen.screen();
      const history = after(shown, 'keel chat ·');
      expect(history).toMatch(
        /you › run: echo resumed-output\nkeel › [^\n]*\n {2}⚙ \$ echo resumed-output\n {4}│ resumed-output\nkeel › [\s\S]*resumed-output[\s\S]*you › and a word\nkeel › [^\n]*You said: “and a word”/,
      );
      expect(history).not.toContain('[run ');
    });

    it('colours the chat on a terminal, and not with NO_COLOR set', async () => {
      let screen = await open();
      await screen.type('hello in colour');
      await screen.press('Enter');
      await screen.waitFor(/\[run \d+ tokens[^\n]*\n+you ›$/);
      // Escape codes on screen: the prompt, the answer's label, the cost line.
      expect(await screen.screenWithEscapes()).toMatch(new RegExp(`${escape}\\[[\\d;]*m(keel|you) ›`));
      await screen.close();

      screen = await open('', `tty-${randomUUID()}`, 'NO_COLOR=1 ');
      terminal = screen;
      await screen.type('hello without');
      await screen.press('Enter');
      await screen.waitFor(/\[run \d+ tokens[^\n]*\n+you ›$/);
      expect(await screen.screenWithEscapes()).not.toContain(escape);
    });

    it('keeps a stopped answer on screen, marked stopped, and in the thread', async () => {
      const threadId = `tty-${randomUUID()}`;
      const screen = await open('', threadId);
      const words = Array.from({ length: 200 }, (_, index) => `w${index}`);
      await screen.type(words.join(' '));
      await screen.press('Enter');
      await screen.waitFor(/keel › [^\n]*w5 /);
      await screen.press('C-c');
      const shown = await screen.waitFor(/⏹ stopped\n\(run cancelled[^\n]*\)\n\[run [^\n]*\n+you ›$/);
      const answer = after(shown, 'keel › ');
      expect(answer).toContain('w5 ');
      expect(answer).not.toContain('w199');
      const exported = await call<{ messages: Array<{ stopped?: boolean }> }>(
        api.url,
        'GET',
        `/threads/${threadId}/export`,
      );
      expect(exported.body.messages.at(-1)).toMatchObject({ stopped: true });
      // Resumed, the thread shows the stopped answer marked as well.
      await screen.close();
      terminal = await open('', threadId);
      expect(after(await terminal.screen(), 'keel chat ·')).toMatch(
        /keel › [^\n]*w5 [\s\S]*\n {2}⏹ stopped\n/,
      );
    });

    it('lists threads as a table, and as JSON with --json', async () => {
      const threadId = `tty-${randomUUID()}`;
      await call(api.url, 'POST', '/threads', { thread_id: threadId, metadata: { table: 'yes', n: 3 } });
      terminal = await TmuxTerminal.start(`${keel} --url ${api.url} threads list --metadata table=yes`);
      const shown = await terminal.waitFor(/\[exited \d+\]/);
      const lines = shown.split('\n');
      expect(lines[0]).toMatch(/^THREAD +STATUS +MODEL +RUNS +COST +CREATED +METADATA$/);
      expect(lines[1]).toMatch(
        new RegExp(
          `^${threadId} +idle +\\S+ +0 +\\$0\\.0000 +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ +.*table=yes n=3$`,
        ),
      );
      // Columns line up: each header starts where its cells do.
      expect(lines[1]!.indexOf('idle')).toBe(lines[0]!.indexOf('STATUS'));
      expect(shown).not.toContain('{');
      const json = await promisify(execFile)('node', [
        '--import',
        'tsx',
        'cli/keel.ts',
        '--url',
        api.url,
        'threads',
        'list',
        '--metadata',
        'table=yes',
        '--json',
      ]);
      expect(JSON.parse(json.stdout)).toEqual([
        expect.objectContaining({
          thread_id: threadId,
          metadata: expect.objectContaining({ table: 'yes', n: 3 }) as unknown,
        }),
      ]);
    });

    it('shows a streamed answer exactly once, in order, and the spinner on a line of its own', async () => {
      const screen = await open();
      const words = Array.from({ length: 45 }, (_, index) => `word-${String(index).padStart(2, '0')}`);
      await screen.type(words.join(' '));
      await screen.press('Enter');
      // The spinner shows while the model has not written yet (the typewriter takes seconds).
      const shown = await screen.waitFor(/\[run \d+ tokens \$0\.0000 · thread \d+ tokens \$0\.0000\]/);
      const lines = shown.split('\n');
      const answer = lines.findIndex((line) => line.startsWith('keel › '));
      expect(lines[answer]).toBe(`keel › ${scriptedReply(words.join(' '))}`);
      // Each word twice on the screen: as typed, and in the answer; nothing written over it.
      for (const word of words) expect(count(shown, word)).toBe(2);
      expect(lines[answer - 1]).toBe(`you › ${words.join(' ')}`);
      expect(lines[answer + 1]).toMatch(/^\[run \d+ tokens/);
      expect(shown).not.toContain('thinking…');
    });

    it('takes a line ending in a backslash, or a pasted block, as one message', async () => {
      const screen = await open();
      await screen.type('first line\\');
      await screen.press('Enter');
      await screen.waitFor(/\n {2}…$/);
      await screen.type('second line');
      await screen.press('Enter');
      let shown = await screen.waitFor(/\[run \d+ tokens[^\n]*\n+you ›$/);
      expect(shown).toContain('You said: “first line\nsecond line”.');
      expect(count(shown, '[run ')).toBe(1);

      await screen.paste('pasted one\npasted two\npasted three\n');
      shown = await screen.waitFor(/(\[run \d+ tokens[\s\S]*){2}\n+you ›$/);
      expect(after(shown, 'you › pasted one')).toContain('You said: “pasted one\npasted two\npasted three”.');
      expect(count(shown, '[run ')).toBe(2);
    });

    it('asks approvals with a countdown and shows a denial as one verdict', async () => {
      const screen = await open('--require-approval');
      await screen.type('run: echo from-the-terminal');
      await screen.press('Enter');
      await screen.waitFor(/Allow \$ echo from-the-terminal\? \[y\/N\] \(\d+s\)$/);
      await screen.type('y');
      await screen.press('Enter');
      let shown = await screen.waitFor(/\[run \d+ tokens[^\n]*\n+you ›$/);
      expect(after(shown, 'you › run:')).toMatch(
        /\[y\/N\] \(\d+s\) y\n {2}approved\n {2}⚙ \$ echo from-the-terminal\n {4}│ from-the-terminal\nkeel › [\s\S]*from-the-terminal/,
      );

      await screen.type('delete: precious.txt');
      await screen.press('Enter');
      await screen.waitFor(/Allow delete_file precious.txt\? \[y\/N\] \(\d+s\)$/);
      await screen.type('n');
      await screen.press('Enter');
      shown = await screen.waitFor(/(\[run \d+ tokens[\s\S]*){2}\n+you ›$/);
      const denial = after(shown, 'you › delete:');
      expect(denial).toMatch(
        /\[y\/N\] \(\d+s\) n\n {2}denied\nkeel › [\s\S]*The user denied this delete_file call/,
      );
      expect(denial).not.toContain('✗');
      expect(denial).not.toMatch(/\(not run\)|⚙ \w+ not run:/);
    });

    it('stops the run on the first Ctrl-C and leaves on the second', async () => {
      const screen = await open();
      await screen.type('think: 60');
      await screen.press('Enter');
      await screen.waitFor(/thinking…/);
      await screen.press('C-c');
      let shown = await screen.waitFor(/\(run cancelled[^\n]*\)\n\[run [^\n]*\n+you ›$/);
      expect(shown).toContain('(stopping the run; Ctrl-C again leaves)');
      await screen.press('C-c');
      shown = await screen.waitFor(/\[exited \d+\]/);
      expect(shown).toContain('[exited 0]');
    });
  });

  describe('piped', () => {
    it('prints the conversation only, one message per line or backslash-joined lines', async () => {
      const threadId = `piped-${randomUUID()}`;
      const result = await pipedChat(
        ['--url', api.url, 'chat', threadId],
        'hello there\nfirst part \\\nsecond part\n',
      );
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const lines = result.stdout.split('\n');
      expect(lines).toEqual([
        `keel chat · thread ${threadId} · scripted:demo · approval auto · /help for commands · /exit to leave`,
        'you › hello there',
        `keel › ${scriptedReply('hello there')}`,
        expect.stringMatching(/^\[run \d+ tokens \$0\.0000 · thread \d+ tokens \$0\.0000\]$/),
        'you › first part ',
        'second part',
        `keel › ${scriptedReply('first part \nsecond part').split('\n')[0]}`,
        `${scriptedReply('first part \nsecond part').split('\n')[1]}`,
        expect.stringMatching(/^\[run \d+ tokens/),
        '',
      ]);
      // No spinner, countdown, carriage return or escape sequence.
      for (const unwanted of ['\r', '\u001b', '⠋', '⠙', '[y/N]'])
        expect(result.stdout).not.toContain(unwanted);
    });

    it('fails fast when an approval comes after the input ended, and cancels the run', async () => {
      const threadId = `piped-${randomUUID()}`;
      const result = await pipedChat(
        ['--url', api.url, 'chat', threadId, '--require-approval'],
        'run: echo needs-a-yes\n',
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'keel: the run asks to allow $ echo needs-a-yes, but the input has ended; ' +
          'pass --approve-all or --deny-all to answer approvals when input is piped (the run was cancelled)\n',
      );
      expect(result.stdout).not.toContain('[y/N]');
      expect(result.ms).toBeLessThan(30_000);
      const runs = await call<Run[]>(api.url, 'GET', `/threads/${threadId}/runs`);
      expect(runs.body[0]).toMatchObject({ status: 'cancelled' });
    });

    it('answers approvals per --deny-all and --approve-all, or from the next input line', async () => {
      const denied = await pipedChat(
        ['--url', api.url, 'chat', `piped-${randomUUID()}`, '--require-approval', '--deny-all'],
        'run: echo not-allowed\n',
      );
      expect(denied.code).toBe(0);
      expect(denied.stdout).toContain('Allow $ echo not-allowed? no (--deny-all)\n  denied\n');
      expect(denied.stdout).toContain('The user denied this bash call');
      expect(denied.stdout).not.toMatch(/\(not run\)|⚙ \w+ not run:/);

      const approved = await pipedChat(
        ['--url', api.url, 'chat', `piped-${randomUUID()}`, '--require-approval', '--approve-all'],
        'run: echo allowed-by-flag\n',
      );
      expect(approved.code).toBe(0);
      expect(approved.stdout).toContain('? yes (--approve-all)\n  approved\n  ⚙ $ echo allowed-by-flag\n');

      const answered = await pipedChat(
        ['--url', api.url, 'chat', `piped-${randomUUID()}`, '--require-approval'],
        'run: echo allowed-by-line\ny\n',
      );
      expect(answered.code).toBe(0);
      expect(answered.stdout).toContain('Allow $ echo allowed-by-line? [y/N] y\n  approved\n');

      // A file tool is asked by its path; a write shows what it would write.
      const written = await pipedChat(
        ['--url', api.url, 'chat', `piped-${randomUUID()}`, '--require-approval', '--approve-all'],
        'write: notes.md: hello from the approval\n',
      );
      expect(written.code).toBe(0);
      expect(written.stdout).toContain(
        '    │ hello from the approval\nAllow write_file notes.md (23 chars)? yes (--approve-all)\n',
      );
      expect(written.stdout).not.toContain('Allow write_file {');
    });
  });
});
