import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { cors } from '../../api/cors';

/** A bare app behind the CORS middleware, answering GET /ping. */
async function serve(origins: string[]): Promise<{ url: string; server: Server }> {
  const app = express();
  app.use(cors(origins));
  app.get('/ping', (_request, response) => {
    response.json({ pong: true });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const preflight = { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } };

describe('CORS', () => {
  it.each<[string, string[], string, string | null]>([
    ['any origin with *', ['*'], 'https://chat.example', '*'],
    ['a listed origin, echoed', ['https://chat.example'], 'https://chat.example', 'https://chat.example'],
    ['no unlisted origin', ['https://chat.example'], 'https://evil.example', null],
    ['no origin at all when CORS is off', [], 'https://chat.example', null],
  ])('allows %s', async (_name, origins, origin, allowed) => {
    const { url, server } = await serve(origins);
    try {
      const answer = await fetch(`${url}/ping`, { headers: { origin } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe(allowed);
      const asked = await fetch(`${url}/ping`, { ...preflight, headers: { ...preflight.headers, origin } });
      expect(asked.status).toBe(204);
      const methods = asked.headers.get('access-control-allow-methods');
      if (allowed === null) expect(methods).toBeNull();
      else expect(methods).toContain('POST');
    } finally {
      server.close();
    }
  });

  it('leaves a plain OPTIONS request (no preflight) to the routes', async () => {
    const { url, server } = await serve(['*']);
    try {
      expect((await fetch(`${url}/ping`, { method: 'OPTIONS' })).status).not.toBe(204);
    } finally {
      server.close();
    }
  });
});
