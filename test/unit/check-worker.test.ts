/**
 * `checkWorker` (decision 0412) against real HTTP endpoints: the process that answers as itself
 * runs; a refused port or another process means the worker stopped; a redirect, an endless body
 * or anything that is not a worker's answer says nothing either way, and is not followed or read.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWorker } from '../../activities/check-worker';
import { freePort } from '../helpers/api';

const servers: Server[] = [];

async function serve(answer: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((_request, response) => answer(response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const asWorker = (worker: string) => (response: ServerResponse) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ worker }));

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('checkWorker', () => {
  it('says running when the process the identity names answers, stopped when another does', async () => {
    const url = await serve(asWorker('41@host-a'));
    expect(await checkWorker({ identity: `41@host-a live=${url}` })).toBe('running');
    expect(await checkWorker({ identity: `42@host-a live=${url}` })).toBe('stopped');
  });

  it('says stopped when nothing listens at the named address', async () => {
    expect(await checkWorker({ identity: `41@host-a live=http://127.0.0.1:${await freePort()}` })).toBe(
      'stopped',
    );
  });

  it('does not follow a redirect, even to the process it names', async () => {
    const real = await serve(asWorker('41@host-a'));
    const redirecting = await serve((response) =>
      response.writeHead(302, { location: `${real}/worker` }).end(),
    );
    expect(await checkWorker({ identity: `41@host-a live=${redirecting}` })).toBe('unknown');
  });

  it('stops reading an answer longer than a worker gives, and says nothing from it', async () => {
    let written = 0;
    const url = await serve((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(`{"worker":"41@host-a","pad":"`);
      const more = (): void => {
        while (written < 64 * 1024 * 1024 && response.write('x'.repeat(65_536))) written += 65_536;
        if (written < 64 * 1024 * 1024) response.once('drain', more);
        else response.end('"}');
      };
      more();
    });
    const started = Date.now();
    expect(await checkWorker({ identity: `41@host-a live=${url}` })).toBe('unknown');
    // Given up at its first kilobytes, not read until the 3 s answer timeout cuts it off.
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('says unknown without a live URL, or with one that is not http', async () => {
    expect(await checkWorker({ identity: '41@host-a' })).toBe('unknown');
    expect(await checkWorker({ identity: '41@host-a live=file:///etc' })).toBe('unknown');
  });
});
