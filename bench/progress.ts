/**
 * Progress on stderr while the benchmark works: the phase, a counter that rewrites itself on a
 * terminal (one line per update otherwise), and how long each phase took.
 */
const interactive = process.stderr.isTTY === true;

let phaseStarted = 0;
let counterShown = false;

function clearCounter(): void {
  if (counterShown && interactive) process.stderr.write('\r\x1b[2K');
  counterShown = false;
}

export const progress = {
  phase(name: string): void {
    clearCounter();
    phaseStarted = performance.now();
    process.stderr.write(`▶ ${name}\n`);
  },
  note(line: string): void {
    clearCounter();
    process.stderr.write(`  ${line}\n`);
  },
  /** `done` of `total`, with what is being counted; rate-limited to a few updates a second off a TTY. */
  count(what: string, done: number, total: number): void {
    const line = `  ${what}: ${done}/${total} (${((performance.now() - phaseStarted) / 1000).toFixed(0)} s)`;
    if (interactive) {
      process.stderr.write(`\r\x1b[2K${line}`);
      counterShown = true;
      if (done === total) {
        clearCounter();
        process.stderr.write(`${line}\n`);
      }
    } else if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0) {
      process.stderr.write(`${line}\n`);
    }
  },
  done(): void {
    clearCounter();
    process.stderr.write(`  done in ${((performance.now() - phaseStarted) / 1000).toFixed(1)} s\n`);
  },
};
