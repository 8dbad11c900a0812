import { ConfigError, parseConfig } from '../../common/config';

describe('configuration', () => {
  it('defaults to the offline scripted model, loopback and the dev server', () => {
    const config = parseConfig({}, '/srv/keel');
    expect(config).toMatchObject({
      model: { default: 'scripted:demo', explicit: false },
      api: { host: '127.0.0.1', port: 8080, tokens: [] },
      temporal: { address: undefined, namespace: 'default', devServerPort: 7233, devServerUiPort: 8233 },
      taskQueue: 'keel',
      dataDir: '/srv/keel/.keel',
      defaults: { approval: 'auto', approvalTimeoutS: 300 },
      shutdownGraceS: 30,
    });
  });

  it('uses Anthropic when a key is set and no model is named', () => {
    expect(parseConfig({ ANTHROPIC_API_KEY: 'sk-ant-x' }, '/').model.default).toMatch(/^anthropic:claude-/);
  });

  it('refuses a non-loopback API host without tokens', () => {
    expect(() => parseConfig({ KEEL_API_HOST: '0.0.0.0' }, '/')).toThrow(/KEEL_API_TOKENS/);
    expect(
      parseConfig({ KEEL_API_HOST: '0.0.0.0', KEEL_API_TOKENS: 'alice:s3cret,bob:t0ken' }, '/').api.tokens,
    ).toEqual([
      { owner: 'alice', token: 's3cret' },
      { owner: 'bob', token: 't0ken' },
    ]);
  });

  it('lets any browser origin call a loopback API, and only the listed ones otherwise', () => {
    expect(parseConfig({}, '/').api.corsOrigins).toEqual(['*']);
    const exposed = { KEEL_API_HOST: '0.0.0.0', KEEL_API_TOKENS: 'alice:s3cret' };
    expect(parseConfig(exposed, '/').api.corsOrigins).toEqual([]);
    expect(
      parseConfig({ ...exposed, KEEL_API_CORS_ORIGINS: 'https://chat.example, http://localhost:3000' }, '/')
        .api.corsOrigins,
    ).toEqual(['https://chat.example', 'http://localhost:3000']);
  });

  it.each([
    ['KEEL_MODEL', 'gpt4', /unknown model provider "gpt4"/],
    ['KEEL_MODEL', 'anthropic:', /names no model/],
    ['KEEL_API_PORT', 'eighty', /KEEL_API_PORT/],
    ['KEEL_APPROVAL', 'sometimes', /KEEL_APPROVAL/],
    ['KEEL_SHUTDOWN_GRACE', '-1', /KEEL_SHUTDOWN_GRACE/],
  ])('fails fast on a bad %s with a clear message', (name, value, message) => {
    expect(() => parseConfig({ [name]: value }, '/')).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value }, '/')).toThrow(message);
  });

  it('passes tools only PATH and locale, never secrets', () => {
    const config = parseConfig(
      { PATH: '/usr/bin', LANG: 'C.UTF-8', ANTHROPIC_API_KEY: 'sk-ant-secret' },
      '/',
    );
    expect(config.childEnvironment).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8' });
  });
});
