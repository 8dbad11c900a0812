/**
 * Starts the longest test files first. On a clean clone jest has no timings of its own and
 * orders by file size, so a ten-minute file could start last and run alone at the end of the
 * run; started first, it runs beside many short files on the other worker. Seconds are from a
 * full run on the CI machine (2026-11-27, `a396c9b`); files not listed follow in jest's own order.
 */
const Sequencer = require('@jest/test-sequencer').default;

const seconds = {
  'test/api/openapi.test.ts': 440,
  'test/chaos/cluster.test.ts': 286,
  'test/chaos/soak.test.ts': 263,
  'test/web/web-chat.test.ts': 219,
  'test/chaos/worker-shutdown.test.ts': 159,
  'test/chaos/worker-killed.test.ts': 140,
  'test/api/keel-up-ends.test.ts': 113,
  'test/ship/package.test.ts': 104,
  'test/cli/chat-terminal.test.ts': 92,
  'test/ship/image.test.ts': 85,
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
