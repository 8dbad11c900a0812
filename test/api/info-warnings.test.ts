/** `/info` says when the bash tool runs unconfined, so an operator's dashboard can show it. */
import { Client, Connection } from '@temporalio/client';
import { parseConfig } from '../../platform/config';
import { call, startTestApi } from '../helpers/api';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';

describe('/info', () => {
  // `/info` asks Temporal nothing: a client that could never connect is enough.
  const client = new Client({
    connection: Connection.lazy({ address: '127.0.0.1:1', interceptors: guardedInterceptors() }),
  });
  const infoWith = async (env: Record<string, string>) => {
    const api = await startTestApi(client, parseConfig(env, '/tmp'));
    try {
      return (await call(api.url, 'GET', '/info')).body;
    } finally {
      await api.stop();
    }
  };

  it('warns when KEEL_SANDBOX=off, and says nothing when commands are confined', async () => {
    expect(await infoWith({ KEEL_SANDBOX: 'off' })).toMatchObject({
      warnings: [
        expect.stringMatching(/^KEEL_SANDBOX=off: the bash tool runs model-chosen commands unconfined/),
      ],
    });
    expect(await infoWith({})).not.toHaveProperty('warnings');
  });

  afterAll(async () => {
    await client.connection.close();
  });
});
