/**
 * The `keel` CLI against a real API, worker and dev server. `keel chat` runs in a real
 * pseudo-terminal (util-linux `script`), typed into like a person would.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pino from 'pino';
import { startApi, type RunningApi } from '../../api/server';
import type { QuotaView } from '../../common/quota';
import type { Thread } from '../../common/thread';
import { apiHarness, call, freePort, userInput } from '../helpers/api';
import { eventually } from '../helpers/temporal';

const run = promisify(execFile);
const keel = ['--import', 'tsx', 'cli/keel.ts'];
const escape = String.fromCharCode(27);
const ansi = new RegExp(`${escape}\\[[0-9;?]*[A-Za-z]`, 'g');
const stripAnsi = (text: string) => text.replace(ansi, '').replace(/\r/g, '');

/** A process in a pseudo-terminal: everything it prints, and a way to type. */
class Terminal {
  output = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;

  constructor(command: string) {
    // A fresh pty reports 0 columns; give it a real size, as a terminal window has.
    this.child = spawn('script', ['-qfec', `stty cols 120 rows 40; ${command}`, '/dev/null'], {
      env: { ...process.env, TERM: 'xterm' },
    });
    this.child.stdout.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', resolve));
  }

  get text(): string {
    return stripAnsi(this.output);
  }

  type(text: string): void {
    this.child.stdin.write(text);
  }

  /** Waits until the screen text after `from` matches; returns the index after the match. */
  async waitFor(pattern: RegExp, from = 0, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = pattern.exec(this.text.slice(from));
      if (match !== null) return from + match.index + match[0].length;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${pattern} on the terminal; it shows:\n${this.text.slice(from)}`);
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

describe('the keel CLI', () => {
  const harness = apiHarness();
  let api: RunningApi;
  beforeAll(() => {
    api = harness.api;
  });

  it('chats in a terminal: streams the answer as it arrives, asks [y/N] with a countdown, shows the cost', async () => {
    // The typewriter scripted model streams a token every 25 ms: an answer takes seconds to arrive.
    const terminal = new Terminal(
      `node ${keel.join(' ')} --url ${api.url} chat cli-thread-${Date.now()} --require-approval --max-cost 5 --model scripted:typewriter`,
    );
    try {
      let at = await terminal.waitFor(/you › /);
      expect(terminal.text).toMatch(
        /keel chat · thread cli-thread-\d+ · scripted:typewriter · approval require/,
      );
      const words = Array.from({ length: 45 }, (_, index) => `stream-${String(index).padStart(2, '0')}`);
      terminal.type(`${words.join(' ')}\r`);
      // Part of the answer is on the screen while the rest is still being written.
      const partial = await terminal.waitFor(/keel › \(Scripted model/, at);
      const early = terminal.text.slice(partial);
      expect(early).not.toContain('stream-44');
      expect(early).not.toMatch(/\[run \d+ tokens/);
      at = await terminal.waitFor(/stream-44”/, partial);
      at = await terminal.waitFor(/\[run \d+ tokens/, at);
      // Streamed once: the answer is on the screen exactly one time.
      expect(terminal.text.split('stream-44').length - 1).toBe(2);

      terminal.type('run: echo from-the-cli\r');
      at = await terminal.waitFor(/Allow \$ echo from-the-cli\? \[y\/N\] \(\d+s\)/, at);
      terminal.type('y\r');
      at = await terminal.waitFor(/approved/, at);
      // The call as a command, then the first lines of its output.
      at = await terminal.waitFor(/⚙ \$ echo from-the-cli[\s\S]*│ from-the-cli/, at);
      at = await terminal.waitFor(/keel › [\s\S]*from-the-cli/, at);
      at = await terminal.waitFor(
        // With a budget, what the thread spent, what its sub-agents hold and what is left.
        /\[run \d+ tokens \$\d+\.\d{4} · thread \d+ tokens \$\d+\.\d{4} of \$5 · spent \$\d+\.\d{4} · reserved \$0\.0000 · left \$\d+\.\d{4}\]/,
        at,
      );

      terminal.type('delete: precious.txt\r');
      at = await terminal.waitFor(/Allow delete_file precious.txt\? \[y\/N\]/, at);
      terminal.type('n\r');
      at = await terminal.waitFor(/denied/, at);
      at = await terminal.waitFor(/keel › [\s\S]*The user denied this delete_file call/, at);
      await terminal.waitFor(/\[run \d+ tokens/, at);
      terminal.type('/exit\r');
      expect(await terminal.exited).toBe(0);
    } finally {
      terminal.kill();
    }
  }, 90_000);

  it('lists, shows, exports and cleans up threads; approves from the command line', async () => {
    const created = await call<Thread>(api.url, 'POST', '/threads', {
      metadata: { cli: 'yes' },
      config: { approval: 'require' },
    });
    const threadId = created.body.thread_id;
    await call(api.url, 'POST', `/threads/${threadId}/runs`, userInput('run: echo cli-approved'));
    const approvals = await eventually(async () => {
      const response = await call<Array<{ approval_id: string }>>(
        api.url,
        'GET',
        `/threads/${threadId}/approvals`,
      );
      return response.body.length === 1 ? response.body : undefined;
    });
    const approved = await run('node', [
      ...keel,
      '--url',
      api.url,
      'approve',
      threadId,
      approvals[0]!.approval_id,
    ]);
    expect(approved.stdout).toBe(`approved ${approvals[0]!.approval_id}\n`);
    await eventually(async () =>
      (await call<Thread>(api.url, 'GET', `/threads/${threadId}`)).body.status === 'idle' ? true : undefined,
    );

    const shown = await run('node', [...keel, '--url', api.url, 'threads', 'show', threadId]);
    expect(shown.stdout).toContain(`thread   ${threadId} (idle)`);
    expect(shown.stdout).toMatch(/summary {2}1 runs, 2 model calls, \d+ tokens, \$\d+\.\d{4}/);
    const exported = await run('node', [...keel, '--url', api.url, 'threads', 'export', threadId]);
    expect(exported.stdout).toContain(`# Thread ${threadId}`);
    expect(exported.stdout).toContain('cli-approved');

    const listed = await eventually(async () => {
      const result = await run('node', [
        ...keel,
        '--url',
        api.url,
        'threads',
        'list',
        '--metadata',
        'cli=yes',
      ]);
      return result.stdout.includes(threadId) ? result.stdout : undefined;
    }, 30_000);
    expect(listed).toMatch(new RegExp(`${threadId} +idle`));
    const dry = await run('node', [
      ...keel,
      '--url',
      api.url,
      'threads',
      'cleanup',
      '--older-than-days',
      '0',
      '--metadata',
      'cli=yes',
    ]);
    expect(dry.stdout).toContain('dry run: 1 thread(s) would be closed and deleted');
    expect(dry.stdout).toContain(threadId);
  }, 90_000);

  it('shows what a thread with a budget spent, holds and has left', async () => {
    const created = await call<Thread>(api.url, 'POST', '/threads', { config: { max_tokens: 100_000 } });
    const threadId = created.body.thread_id;
    await call(api.url, 'POST', `/threads/${threadId}/runs/wait`, userInput('hello budget'));
    const shown = await run('node', [...keel, '--url', api.url, 'threads', 'show', threadId]);
    const line = /^budget {3}spent ([\d,]+) tokens · reserved 0 tokens · left ([\d,]+) tokens$/m.exec(
      shown.stdout,
    );
    expect(line).not.toBeNull();
    const spent = Number(line![1]!.replaceAll(',', ''));
    const left = Number(line![2]!.replaceAll(',', ''));
    expect(spent).toBeGreaterThan(0);
    expect(spent + left).toBe(100_000);
    // No quota is configured: no quota line.
    expect(shown.stdout).not.toContain('quota');
  }, 60_000);

  it("says in the chat what a quota refused and why, and what the owner's quota holds (decisions 0440, 0480)", async () => {
    // An API with a day quota of $0.001: a run is admitted with half of it, less than a first
    // call on scripted:metered needs, so its share refuses that call before any request.
    const port = await freePort();
    const withQuota = (dayUsd: number) =>
      startApi({
        client: harness.client,
        config: { ...harness.config, quota: { day_usd: dayUsd } },
        logger: pino({ level: 'silent' }),
        host: '127.0.0.1',
        port,
      });
    let quotaApi = await withQuota(0.001);
    const threadId = `cli-quota-${Date.now()}`;
    const terminal = new Terminal(
      `node ${keel.join(' ')} --url ${quotaApi.url} chat ${threadId} --model scripted:metered`,
    );
    try {
      let at = await terminal.waitFor(/you › /);
      terminal.type('hello on a quota\r');
      at = await terminal.waitFor(
        /\(run failed: quota_exceeded — the run's share of its owner's quota is the lesser ceiling: [^\n]+\)/,
        at,
      );
      at = await terminal.waitFor(
        /\[quota today \$0\.0000 of \$0\.0010 \(reserved \$0\.000\d, left \$0\.00\d\d\)\]/,
        at,
      );
      // Once settled, `keel threads show` says what the quota holds: the refused call cost nothing.
      await eventually(async () => {
        const quota = await call<QuotaView>(quotaApi.url, 'GET', '/quota');
        return quota.body.runs.active === 0 ? true : undefined;
      }, 30_000);
      const shown = await run('node', [...keel, '--url', quotaApi.url, 'threads', 'show', threadId]);
      expect(shown.stdout).toMatch(
        /^quota {4}today \$0\.0000 of \$0\.0010 \(reserved \$0\.0000, left \$0\.0010\)$/m,
      );
      expect(shown.stdout).toMatch(/run \S+ failed \(quota_exceeded\) 0 steps \$0\.0000/);

      // The operator lowers the day to a micro-dollar: the next message is refused at the door.
      await quotaApi.stop();
      quotaApi = await withQuota(0.000001);
      terminal.type('hello past the quota\r');
      await terminal.waitFor(
        /✗ not sent: your quota is used up — this owner's quota of \$0\.000001 a day is spent or held by runs under way \(\$0 spent, \$0 held\); it resets at \S+Z \(HTTP 429 quota_exceeded\)/,
        at,
      );
      terminal.type('/exit\r');
      expect(await terminal.exited).toBe(0);
    } finally {
      terminal.kill();
      await quotaApi.stop();
    }
  }, 90_000);

  it('reports errors as one line with a non-zero exit', async () => {
    const failure = await run('node', [...keel, '--url', api.url, 'threads', 'show', 'no-such-thread']).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1, stdout: '' });
    expect((failure as { stderr: string }).stderr).toBe(
      'keel: thread no-such-thread not found (HTTP 404 thread_not_found)\n',
    );
    const unreachable = await run('node', [...keel, '--url', 'http://127.0.0.1:9', 'threads', 'list']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(unreachable).toMatchObject({ code: 1 });
    expect((unreachable as { stderr: string }).stderr).toBe(
      'keel: cannot reach the Keel API at http://127.0.0.1:9; is it running (keel up)?\n',
    );
  }, 60_000);
});
