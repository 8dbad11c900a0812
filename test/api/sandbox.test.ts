/**
 * The bash tool's sandbox, attacked through the API with the offline scripted model (each
 * `run:` line makes it call bash): host files, the worker's environment, another thread's
 * workspace, the host's home, loopback network, a fork bomb, a file-size bomb and a runaway
 * sleep. Each is refused or contained, and the thread answers its next message.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { call, createThread, processApiHarness, sendToolLines, type ToolOutput } from '../helpers/api';
import { testAddress } from '../helpers/temporal';

jest.setTimeout(120_000);

/** In the worker process's environment, with a model key and API tokens: no command may see them. */
const canary = `canary-${randomUUID()}`;
const secretKey = `sk-ant-${randomUUID()}`;
const apiToken = `token-${randomUUID()}`;
const secrets = () => ({
  KEEL_SANDBOX_TEST_CANARY: canary,
  ANTHROPIC_API_KEY: secretKey,
  KEEL_API_TOKENS: `alice:${apiToken}`,
});

/** Runs `lines` as one message and returns each tool call's result, in order. */
async function runLines(base: string, threadId: string, lines: string[]): Promise<ToolOutput[]> {
  return (
    await sendToolLines(
      base,
      threadId,
      lines.map((line) => `run: ${line}`),
    )
  ).results;
}

const newThread = (base: string) => createThread(base, 'sandbox');

/** The thread still works after whatever came before. */
async function expectStillAnswers(base: string, threadId: string): Promise<void> {
  const marker = `still-here-${randomUUID()}`;
  expect(await runLines(base, threadId, [`echo ${marker}`])).toEqual([
    { content: `${marker}\n`, is_error: false },
  ]);
}

describe('the bash sandbox, through the API', () => {
  const harness = processApiHarness(
    () => ({
      KEEL_MODEL: 'scripted:demo',
      KEEL_SANDBOX_TIMEOUT_S: '3',
      KEEL_SANDBOX_PROCESSES: '64',
      KEEL_SANDBOX_FILE_MB: '8',
    }),
    secrets,
  );

  it('shows the sandbox its own /etc/passwd, not the host users, and no host home or data dir', async () => {
    const threadId = await newThread(harness.base);
    const home = os.homedir();
    const [passwd, root, ssh, dataDir, shadow] = await runLines(harness.base, threadId, [
      'cat /etc/passwd',
      'ls -a / /root',
      `ls -la ~/.ssh ${home}/.ssh ${home}`,
      `ls ${harness.config.dataDir}`,
      'cat /etc/shadow',
    ]);
    const hostUsers = (await readFile('/etc/passwd', 'utf8')).split('\n').map((line) => line.split(':')[0]);
    expect(passwd!.is_error).toBe(false);
    expect(passwd!.content.split('\n').map((line) => line.split(':')[0])).toEqual(['root', 'keel', '']);
    expect(hostUsers.length).toBeGreaterThan(3);
    expect(root!.content).toMatch(/cannot access '\/root'/);
    expect(root!.content).not.toMatch(/\bhome\b|\bopt\b|\bsrv\b|\bvar\b|\bwork\b/);
    expect(ssh).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/No such file or directory/),
    });
    expect(dataDir).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/No such file or directory/),
    });
    expect(shadow).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/No such file or directory/),
    });
    await expectStillAnswers(harness.base, threadId);
  });

  it("never shows a command the worker's environment or processes", async () => {
    const threadId = await newThread(harness.base);
    const outputs = await runLines(harness.base, threadId, [
      'tr "\\0" "\\n" < /proc/$PPID/environ',
      'tr "\\0" "\\n" < /proc/1/environ',
      'cat /proc/*/environ | tr "\\0" "\\n"',
      'env',
      'ls /proc | grep -cE "^[0-9]+$"',
      `cat /proc/${harness.worker.pid}/environ`,
    ]);
    for (const output of outputs) {
      expect(output.content).not.toContain(canary);
      expect(output.content).not.toContain(secretKey);
      expect(output.content).not.toContain(apiToken);
    }
    const names = outputs[3]!.content
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split('=')[0]);
    expect(new Set(names)).toEqual(
      new Set(['PATH', 'HOME', 'TMPDIR', 'PWD', 'SHLVL', '_', 'KEEL_THREAD_ID', 'KEEL_IDEMPOTENCY_KEY']),
    );
    // The sandbox's own pid namespace: its init, the shells, ls and grep; none of the host's.
    expect(Number(outputs[4]!.content)).toBeLessThan(8);
    expect(outputs[5]!.is_error).toBe(true);
    await expectStillAnswers(harness.base, threadId);
  });

  it("cannot reach another thread's workspace by relative or absolute path", async () => {
    const other = await newThread(harness.base);
    const secret = `other-secret-${randomUUID()}`;
    await runLines(harness.base, other, [`echo ${secret} > note.txt`]);
    const otherWorkspace = path.join(harness.config.dataDir, 'workspaces', other);
    expect(await readFile(path.join(otherWorkspace, 'note.txt'), 'utf8')).toBe(`${secret}\n`);

    const threadId = await newThread(harness.base);
    const outputs = await runLines(harness.base, threadId, [
      `cat ../${other}/note.txt`,
      `cat ${otherWorkspace}/note.txt`,
      'ls -a ..',
      `grep -r ${secret} / 2>/dev/null; echo searched`,
      'pwd',
    ]);
    for (const output of outputs) expect(output.content).not.toContain(secret);
    expect(outputs[0]!.is_error).toBe(true);
    expect(outputs[1]!.is_error).toBe(true);
    expect(outputs[2]!.content).not.toContain(other);
    expect(outputs[4]!.content).toBe('/workspace\n');
    await expectStillAnswers(harness.base, threadId);
  });

  it('has no network: /dev/tcp and curl to the API and Temporal on loopback fail', async () => {
    const threadId = await newThread(harness.base);
    const apiPort = new URL(harness.base).port;
    const temporalPort = testAddress().split(':').at(-1)!;
    const outputs = await runLines(harness.base, threadId, [
      `echo hi > /dev/tcp/127.0.0.1/${apiPort}`,
      `curl -sS --max-time 2 http://127.0.0.1:${apiPort}/healthz`,
      `echo hi > /dev/tcp/127.0.0.1/${temporalPort}`,
      'cat /proc/net/tcp | wc -l',
    ]);
    expect(outputs[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/Connection refused/),
    });
    expect(outputs[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/Couldn't connect/) });
    expect(outputs[1]!.content).not.toContain('"status"');
    expect(outputs[2]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/Connection refused/),
    });
    // Only the header line: the sandbox's network namespace holds no sockets of the host.
    expect(outputs[3]!.content.trim()).toBe('1');
    // The API itself is listening: the refusal is the sandbox's doing.
    expect((await call(harness.base, 'GET', '/healthz')).status).toBe(200);
    await expectStillAnswers(harness.base, threadId);
  });

  it('contains a fork bomb with the process limit', async () => {
    const threadId = await newThread(harness.base);
    const started = Date.now();
    // The shell stays until the timeout (3 s here), so the bomb surely meets the process limit
    // (64) while it runs: the forks that fail say so, and the timeout takes everything down.
    const [bomb] = await runLines(harness.base, threadId, [':(){ :|:& };:; while :; do :; done']);
    expect(bomb!.content).toMatch(/Resource temporarily unavailable/);
    expect(bomb!.content).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(60_000);
    await expectStillAnswers(harness.base, threadId);
  });

  it('stops `yes > big` at the file size limit', async () => {
    const threadId = await newThread(harness.base);
    const [yes] = await runLines(harness.base, threadId, ['yes > big']);
    expect(yes).toMatchObject({ is_error: true, content: expect.stringMatching(/File size limit exceeded/) });
    const big = await stat(path.join(harness.config.dataDir, 'workspaces', threadId, 'big'));
    expect(big.size).toBeLessThanOrEqual(8 * 1024 * 1024);
    await expectStillAnswers(harness.base, threadId);
  });

  it('kills a long sleep at the timeout, with everything it started', async () => {
    const threadId = await newThread(harness.base);
    const started = Date.now();
    const [sleeper] = await runLines(harness.base, threadId, ['(sleep 600 &); sleep 600']);
    expect(sleeper).toMatchObject({ is_error: true, content: expect.stringMatching(/timed out after 3 s/) });
    expect(Date.now() - started).toBeLessThan(30_000);
    // Nothing of it survives on the host: no `sleep 600` anywhere.
    const sleeping = [];
    for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline === 'sleep\u0000600\u0000') sleeping.push(pid);
    }
    expect(sleeping).toEqual([]);
    await expectStillAnswers(harness.base, threadId);
  });
});

describe('with KEEL_SANDBOX=off (the control: the same probe leaks)', () => {
  const harness = processApiHarness(() => ({ KEEL_MODEL: 'scripted:demo', KEEL_SANDBOX: 'off' }), secrets);

  it("shows the worker's environment to a command, which is why the sandbox is on by default", async () => {
    const threadId = await newThread(harness.base);
    // The worker's own process (a command's parent is the worker's command runner, which has no
    // environment): the same probe as the sandboxed one above.
    const [environ] = await runLines(harness.base, threadId, [
      `tr "\\0" "\\n" < /proc/${harness.worker.pid}/environ`,
    ]);
    expect(environ!.content).toContain(canary);
    expect(environ!.content).toContain(secretKey);
  });
});
