import { ConfigError, parseConfig } from '../../platform/config';

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

  it('keeps workspaces in the data dir unless KEEL_WORKSPACES_DIR names a shared one', () => {
    expect(parseConfig({}, '/srv/keel').workspacesDir).toBe('/srv/keel/.keel/workspaces');
    expect(parseConfig({ KEEL_WORKSPACES_DIR: '/mnt/efs/keel' }, '/srv/keel').workspacesDir).toBe(
      '/mnt/efs/keel',
    );
    expect(parseConfig({ KEEL_WORKSPACES_DIR: 'shared' }, '/srv/keel').workspacesDir).toBe(
      '/srv/keel/shared',
    );
  });

  it('uses Anthropic when a key is set and no model is named', () => {
    expect(parseConfig({ ANTHROPIC_API_KEY: 'sk-ant-x' }, '/').model.default).toMatch(/^anthropic:claude-/);
  });

  it('refuses a non-loopback API host without tokens', () => {
    expect(() => parseConfig({ KEEL_API_HOST: '0.0.0.0' }, '/')).toThrow(/KEEL_API_TOKENS/);
    expect(
      parseConfig(
        {
          KEEL_API_HOST: '0.0.0.0',
          KEEL_API_TOKENS: 'alice:s3cret-0123456789abcdef,bob:t0ken-0123456789abcdef',
        },
        '/',
      ).api.tokens,
    ).toEqual([
      { owner: 'alice', token: 's3cret-0123456789abcdef' },
      { owner: 'bob', token: 't0ken-0123456789abcdef' },
    ]);
  });

  it('lets no browser origin call the API unless the operator lists it', () => {
    expect(parseConfig({}, '/').api.corsOrigins).toEqual([]);
    const exposed = { KEEL_API_HOST: '0.0.0.0', KEEL_API_TOKENS: 'alice:0123456789abcdef0123' };
    expect(parseConfig(exposed, '/').api.corsOrigins).toEqual([]);
    expect(
      parseConfig({ KEEL_API_CORS_ORIGINS: 'https://chat.example, http://localhost:3000' }, '/').api
        .corsOrigins,
    ).toEqual(['https://chat.example', 'http://localhost:3000']);
    expect(parseConfig({ ...exposed, KEEL_API_CORS_ORIGINS: '*' }, '/').api.corsOrigins).toEqual(['*']);
  });

  it.each([
    ['KEEL_API_CORS_ORIGINS', /KEEL_API_CORS_ORIGINS: \* lets every web page call the API/],
    ['KEEL_API_ALLOWED_HOSTS', /KEEL_API_ALLOWED_HOSTS: \* lets any site .* set KEEL_API_TOKENS first/],
  ])('refuses %s=* without tokens: every page could read and change every thread', (name, message) => {
    expect(() => parseConfig({ [name]: 'https://chat.example,*' }, '/')).toThrow(message);
  });

  it('serves the loopback names, the host it listens on unless a wildcard, and the listed ones', () => {
    const loopback = ['127.0.0.1', 'localhost', '::1'];
    expect(parseConfig({}, '/').api.allowedHosts).toEqual(loopback);
    const tokens = 'alice:0123456789abcdef0123';
    expect(
      parseConfig(
        { KEEL_API_HOST: '0.0.0.0', KEEL_API_TOKENS: tokens, KEEL_API_ALLOWED_HOSTS: 'keel-api' },
        '/',
      ).api.allowedHosts,
    ).toEqual([...loopback, 'keel-api']);
    expect(
      parseConfig({ KEEL_API_HOST: 'keel.internal', KEEL_API_TOKENS: tokens }, '/').api.allowedHosts,
    ).toEqual([...loopback, 'keel.internal']);
  });

  it.each([
    ['a list of nothing', ',', /KEEL_API_TOKENS: names no token/],
    ['blanks and commas', ' , ,', /KEEL_API_TOKENS: names no token/],
    ['an owner without a token', 'alice:', /entry 1 \(owner "alice"\) has a token of 0 characters/],
    [
      'a short token',
      'alice:0123456789abcdef,bob:short',
      /entry 2 \(owner "bob"\) has a token of 5 characters; use at least 16/,
    ],
    ['a token without an owner', ':0123456789abcdef', /entry 1 has no owner/],
    ['a bare short token', 'secret', /has a token of 6 characters/],
    [
      'a "?" in an owner name',
      'acme?:0123456789abcdef',
      /entry 1 \(owner "acme\?"\) has a "\?" in its owner name/,
    ],
  ])('refuses KEEL_API_TOKENS with %s at start, so auth never fails open', (_case, tokens, message) => {
    for (const host of ['127.0.0.1', '0.0.0.0']) {
      expect(() => parseConfig({ KEEL_API_HOST: host, KEEL_API_TOKENS: tokens }, '/')).toThrow(ConfigError);
      expect(() => parseConfig({ KEEL_API_HOST: host, KEEL_API_TOKENS: tokens }, '/')).toThrow(message);
    }
  });

  it('reads the sandbox settings, confined with no network by default', () => {
    expect(parseConfig({}, '/').sandbox).toEqual({
      mode: 'on',
      network: 'off',
      networkHosts: [],
      uid: 65534,
      uidRange: { base: 100_000, count: 65_536 },
      limits: {
        wallSeconds: 120,
        cpuSeconds: 600,
        memoryMb: 4096,
        processes: 256,
        fileMb: 1024,
        tmpMb: 512,
        workspaceMb: 10_240,
        diskReserveMb: 1_024,
        inodeReserve: 100_000,
        workspaceInodes: 1_000_000,
      },
    });
    const custom = parseConfig(
      {
        KEEL_SANDBOX: 'off',
        KEEL_SANDBOX_NETWORK: 'on',
        KEEL_SANDBOX_PROCESSES: '32',
        KEEL_SANDBOX_FILE_MB: '8',
      },
      '/',
    ).sandbox;
    expect(custom).toMatchObject({ mode: 'off', network: 'on', limits: { processes: 32, fileMb: 8 } });
    expect(
      parseConfig({ KEEL_SANDBOX_NETWORK_HOSTS: 'PyPI.org, *.pythonhosted.org,localhost:8443' }, '/').sandbox
        .networkHosts,
    ).toEqual([{ host: 'pypi.org' }, { host: '*.pythonhosted.org' }, { host: 'localhost', port: 8443 }]);
    expect(() => parseConfig({ KEEL_SANDBOX_NETWORK_HOSTS: 'https://pypi.org/simple' }, '/')).toThrow(
      /KEEL_SANDBOX_NETWORK_HOSTS/,
    );
    // Canonical at parse time, and wrong entries refused with the reason, before anything starts.
    expect(
      parseConfig({ KEEL_SANDBOX_NETWORK_HOSTS: '0x7f.1:8080,[0::ffff:7f00:1]:9000,Localhost.:8443' }, '/')
        .sandbox.networkHosts,
    ).toEqual([
      { host: '127.0.0.1', port: 8080 },
      { host: '127.0.0.1', port: 9000 },
      { host: 'localhost', port: 8443 },
    ]);
    expect(() => parseConfig({ KEEL_SANDBOX_NETWORK_HOSTS: '*,*.localhost' }, '/')).toThrow(
      /KEEL_SANDBOX_NETWORK_HOSTS[^]*a wildcard never covers a loopback name/,
    );
    expect(() => parseConfig({ KEEL_SANDBOX_NETWORK_HOSTS: '*.127.0.0' }, '/')).toThrow(
      /a wildcard covers names, not addresses/,
    );
    expect(() => parseConfig({ KEEL_SANDBOX_NETWORK_HOSTS: '[fe80::1%25eth0]:80' }, '/')).toThrow(/zone id/);
    expect(() => parseConfig({ KEEL_CODEC_UI_TOKEN: 'short' }, '/')).toThrow(/KEEL_CODEC_UI_TOKEN/);
    expect(
      parseConfig({ KEEL_WEBHOOK_ALLOW_HOSTS: ' 127.0.0.1, Hooks.Internal ' }, '/').webhookAllowHosts,
    ).toEqual(['127.0.0.1', 'hooks.internal']);
  });

  it.each([
    ['KEEL_MODEL', 'gpt4', /unknown model provider "gpt4"/],
    ['KEEL_SANDBOX', 'maybe', /KEEL_SANDBOX/],
    ['KEEL_SANDBOX_PROCESSES', '0', /KEEL_SANDBOX_PROCESSES/],
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
