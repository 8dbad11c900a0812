/** The codec server the Temporal Web UI decrypts through: Temporal's remote codec protocol. */
import { call, apiHarness } from '../helpers/api';

const token = 'alice-0123456789abcdef';
const uiOrigin = 'http://127.0.0.1:8233';

describe('the codec endpoint', () => {
  const uiToken = 'web-ui-codec-token-0123456789abcdefghij';
  const harness = apiHarness(() => ({ KEEL_API_TOKENS: `alice:${token}`, KEEL_CODEC_UI_TOKEN: uiToken }));
  const auth = { authorization: `Bearer ${token}`, 'X-Namespace': 'default' };
  const plain = {
    metadata: { encoding: Buffer.from('json/plain').toString('base64') },
    data: Buffer.from('"a secret"').toString('base64'),
  };

  it('encrypts and decrypts payloads in the JSON of the codec protocol', async () => {
    const encoded = await call<{ payloads: { metadata: Record<string, string>; data: string }[] }>(
      harness.base,
      'POST',
      '/codec/encode',
      { payloads: [plain] },
      auth,
    );
    expect(encoded.status).toBe(200);
    const [sealed] = encoded.body.payloads;
    expect(Buffer.from(sealed!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(sealed!.data, 'base64').toString()).not.toContain('a secret');
    const decoded = await call(harness.base, 'POST', '/codec/decode', { payloads: [sealed, plain] }, auth);
    expect(decoded.status).toBe(200);
    expect(decoded.body).toEqual({ payloads: [plain, plain] });
  });

  it('is behind the API authentication', async () => {
    const response = await call<{ error: { code: string } }>(harness.base, 'POST', '/codec/decode', {
      payloads: [plain],
    });
    expect(response.status).toBe(401);
  });

  /** The plain payload, sealed by the API's own encode. */
  const encodePlain = () =>
    call<{ payloads: unknown[] }>(harness.base, 'POST', '/codec/encode', { payloads: [plain] }, auth);

  it("opens to the Web UI with its own token in the path (it cannot send the API's), and to nothing else", async () => {
    const encoded = await encodePlain();
    const fromUi = await call(harness.base, 'POST', `/codec/ui/${uiToken}/decode`, encoded.body, {
      'X-Namespace': 'default',
    });
    expect(fromUi.status).toBe(200);
    expect(fromUi.body).toEqual({ payloads: [plain] });
    const wrong = await call<{ error: { code: string } }>(
      harness.base,
      'POST',
      `/codec/ui/${uiToken.slice(0, -1)}x/decode`,
      encoded.body,
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('unauthenticated');
    // The UI token opens the codec only: not the API, not the same path elsewhere.
    const threads = await call(harness.base, 'POST', `/codec/ui/${uiToken}/../../threads/search`, {});
    expect(threads.status).toBe(401);
    const asBearer = await call(
      harness.base,
      'POST',
      '/threads/search',
      {},
      { authorization: `Bearer ${uiToken}` },
    );
    expect(asBearer.status).toBe(401);
  });

  it("answers the Web UI's preflight from its origin, and no other", async () => {
    const preflight = (origin: string) =>
      fetch(`${harness.base}/codec/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace,authorization',
        },
      });
    const fromUi = await preflight(uiOrigin);
    expect(fromUi.status).toBe(204);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(fromUi.headers.get('access-control-allow-headers')).toMatch(/x-namespace/i);
    const elsewhere = await preflight('https://evil.example');
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("takes the Web UI's decode from its origin, and refuses another origin's with 403 naming KEEL_CODEC_CORS_ORIGINS", async () => {
    const encoded = await encodePlain();
    const decode = (origin: string) =>
      call<{ error?: { code: string; message: string } }>(
        harness.base,
        'POST',
        `/codec/ui/${uiToken}/decode`,
        encoded.body,
        { 'X-Namespace': 'default', origin },
      );
    const fromUi = await decode(uiOrigin);
    expect(fromUi.status).toBe(200);
    expect(fromUi.body).toEqual({ payloads: [plain] });
    const elsewhere = await decode('https://evil.example');
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error?.code).toBe('origin_not_allowed');
    expect(elsewhere.body.error?.message).toContain('KEEL_CODEC_CORS_ORIGINS');
  });

  it('refuses another namespace, a payload that is not base64 and one it cannot decrypt, clearly', async () => {
    const other = await call<{ error: { code: string; message: string } }>(
      harness.base,
      'POST',
      '/codec/decode',
      { payloads: [plain] },
      { ...auth, 'X-Namespace': 'elsewhere' },
    );
    expect(other.status).toBe(400);
    expect(other.body.error.message).toBe('this codec serves namespace "default", not "elsewhere"');
    const garbled = await call<{ error: { code: string } }>(
      harness.base,
      'POST',
      '/codec/decode',
      { payloads: [{ data: 'not base64!' }] },
      auth,
    );
    expect(garbled.status).toBe(422);
    const foreign = await call<{ error: { code: string; message: string } }>(
      harness.base,
      'POST',
      '/codec/decode',
      {
        payloads: [
          {
            metadata: {
              encoding: Buffer.from('binary/encrypted').toString('base64'),
              'encryption-key-id': Buffer.from('retired').toString('base64'),
            },
            data: Buffer.alloc(40).toString('base64'),
          },
        ],
      },
      auth,
    );
    expect(foreign.status).toBe(422);
    expect(foreign.body.error).toMatchObject({ code: 'payload_undecryptable' });
    expect(foreign.body.error.message).toMatch(/encrypted with key "retired"/);
  });
});
