/**
 * Starts the longest test files first. On a clean clone jest has no timings of its own and
 * orders by file size, so a ten-minute file could start last and run alone at the end of the
 * run; started first, it runs beside many short files on the other worker. Seconds are from the
 * full clean-clone run of 2026-11-28 (jest 2,168 s on 2 cores; files not listed follow in jest's
 * own order). In it both workers ended within seconds of each other: longest-first over its own
 * times puts them at 2,162 and 2,160 s (decision 0515). The soak lost its rolling phase since
 * (about 60 s, decision 0515).
 */
const Sequencer = require('@jest/test-sequencer').default;

const seconds = {
  'test/api/openapi.test.ts': 626,
  'test/chaos/cluster.test.ts': 398,
  'test/web/web-chat.test.ts': 218,
  'test/chaos/soak.test.ts': 205,
  'test/chaos/worker-shutdown.test.ts': 182,
  'test/chaos/worker-killed.test.ts': 167,
  'test/cli/chat-terminal.test.ts': 121,
  'test/ship/package.test.ts': 118,
  'test/api/keel-up-ends.test.ts': 117,
  'test/workflows/replay-every-task.test.ts': 99,
  'test/ship/image.test.ts': 87,
  'test/api/langgraph-interrupts-worker-kill.test.ts': 67,
  'test/api/sandbox-isolation.test.ts': 62,
  'test/api/keel-up.test.ts': 61,
  'test/examples/order-triage-chaos.test.ts': 61,
};

class LongestFirst extends Sequencer {
  sort(tests) {
    const weight = (test) => {
      const relative = test.path.slice(test.context.config.rootDir.length + 1);
      return seconds[relative] ?? 0;
    };
    const ordered = super.sort(tests);
    return [...ordered].sort((a, b) => weight(b) - weight(a));
  }
}

module.exports = LongestFirst;
