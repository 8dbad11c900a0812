/**
 * Starts the longest test files first. On a clean clone jest has no timings of its own and
 * orders by file size, so a ten-minute file could start last and run alone at the end of the
 * run; started first, it runs beside many short files on the other worker. Seconds are from a
 * full run on the CI machine; files not listed follow in jest's own order.
 */
const Sequencer = require('@jest/test-sequencer').default;

const seconds = {
  'test/api/openapi.test.ts': 600,
  'test/chaos/cluster.test.ts': 280,
  'test/chaos/soak.test.ts': 276,
  'test/web/web-chat.test.ts': 207,
  'test/ship/package.test.ts': 143,
  'test/api/langgraph-protocol.test.ts': 120,
  'test/cli/start-refusals.test.ts': 110,
  'test/ship/image.test.ts': 88,
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
