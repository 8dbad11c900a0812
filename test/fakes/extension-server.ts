/**
 * A small MCP tool server (the official SDK's server over stdio) for extension-host tests. Its
 * manners come from argv[2]:
 * - `polite`: answers Keel's `shutdown` and exits when stdin closes;
 * - `stubborn`: never answers `shutdown`, ignores stdin closing and SIGTERM (only SIGKILL ends it);
 * - `crashy`: like polite, but its `crash` tool kills the process mid-call.
 * Any server's `flood` tool answers with one message that never ends (bytes, no newline, for as
 * long as stdout takes them), as a hostile or broken server would.
 * Every start, call and shutdown is appended to the file in EXTENSION_LOG, and each run of
 * `mark` appends a line to the marker file it is given, so tests count real executions.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const manners = process.argv[2] ?? 'polite';
const record = (line: string): void => {
  if (process.env.EXTENSION_LOG !== undefined) appendFileSync(process.env.EXTENSION_LOG, `${line}\n`);
};

const server = new McpServer({ name: `fake-${manners}`, version: '1.0.0' });

server.registerTool(
  'echo',
  { description: 'Repeats the text it is given.', inputSchema: { text: z.string() } },
  ({ text }) => {
    record(`call echo ${process.pid}`);
    return { content: [{ type: 'text', text }] };
  },
);

server.registerTool(
  'mark',
  {
    description: 'Appends a line to a marker file, then waits `ms` milliseconds.',
    inputSchema: { file: z.string(), ms: z.number().int().min(0) },
  },
  async ({ file, ms }) => {
    record(`call mark ${process.pid}`);
    appendFileSync(file, `${process.pid}\n`);
    await sleep(ms);
    return { content: [{ type: 'text', text: 'marked' }] };
  },
);

server.registerTool('crash', { description: 'Dies in the middle of the call.' }, async () => {
  record(`call crash ${process.pid}`);
  await sleep(200);
  if (manners === 'crashy') process.exit(3);
  return { content: [{ type: 'text', text: 'did not crash' }] };
});

server.registerTool('flood', { description: 'Answers with a message that never ends.' }, async () => {
  record(`call flood ${process.pid}`);
  const chunk = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${'x'.repeat(60_000)}`;
  for (;;) {
    if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
});

const shutdownRequest = z.object({
  method: z.literal('shutdown'),
  params: z.object({ reason: z.string() }),
});

server.server.setRequestHandler(shutdownRequest, async ({ params }) => {
  record(`shutdown ${params.reason} ${process.pid}`);
  if (manners === 'stubborn') await new Promise(() => undefined);
  return {};
});

if (manners === 'stubborn') {
  process.on('SIGTERM', () => record(`ignored SIGTERM ${process.pid}`));
  setInterval(() => undefined, 60_000);
}

record(`start ${manners} ${process.pid}`);
void server.connect(new StdioServerTransport());
