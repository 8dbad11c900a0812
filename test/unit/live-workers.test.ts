import {
  loopbackLiveWorkers,
  parseLiveWorkerEntry,
  parseLiveWorkers,
  refusedLiveUrl,
} from '../../common/live-workers';
import { parseConfig } from '../../common/config';

describe('the worker addresses an API reads live text from', () => {
  const loopback = parseLiveWorkers(loopbackLiveWorkers);

  it.each([
    'http://127.0.0.1:41234',
    'http://127.0.0.2:80',
    'http://[::1]:41234',
    'http://localhost:41234',
    'http://2130706433:41234',
    'http://[::ffff:7f00:1]:41234',
  ])('allows %s by default: every worker of npm start and keel up is on loopback', (url) => {
    expect(refusedLiveUrl(loopback, url)).toBeUndefined();
  });

  it.each([
    ['http://10.0.3.7:7001', /not in KEEL_API_LIVE_WORKERS/],
    ['http://169.254.169.254/latest', /not in KEEL_API_LIVE_WORKERS/],
    ['http://192.0.2.10:9', /not in KEEL_API_LIVE_WORKERS/],
    ['http://evil.example:80', /not in KEEL_API_LIVE_WORKERS/],
    ['http://localhost.evil.example:80', /not in KEEL_API_LIVE_WORKERS/],
    ['http://user:pass@127.0.0.1:7001', /user, query or fragment/],
    ['http://127.0.0.1:7001?x=1', /user, query or fragment/],
    ['file:///etc/passwd', /not HTTP/],
    ['not a url', /not a URL/],
  ])('refuses %s by default', (url, reason) => {
    expect(refusedLiveUrl(loopback, url)).toMatch(reason);
  });

  it('matches a host with its port, a host on any port, a CIDR block, and * for any', () => {
    const entries = parseLiveWorkers('keel-worker, 10.0.3.7:7001, [fd00::7]:7001, 172.16.0.0/12');
    expect(refusedLiveUrl(entries, 'http://keel-worker:39000')).toBeUndefined();
    expect(refusedLiveUrl(entries, 'http://KEEL-WORKER.:39000')).toBeUndefined();
    expect(refusedLiveUrl(entries, 'http://10.0.3.7:7001')).toBeUndefined();
    expect(refusedLiveUrl(entries, 'http://10.0.3.7:7002')).toMatch(/not in/);
    expect(refusedLiveUrl(entries, 'http://[fd00::7]:7001')).toBeUndefined();
    expect(refusedLiveUrl(entries, 'http://172.20.1.1:5000')).toBeUndefined();
    expect(refusedLiveUrl(entries, 'http://172.32.0.1:5000')).toMatch(/not in/);
    expect(refusedLiveUrl(entries, 'http://127.0.0.1:5000')).toMatch(/not in/);
    expect(refusedLiveUrl(parseLiveWorkers('*'), 'http://203.0.113.5:1')).toBeUndefined();
  });

  it('refuses entries that name no host, and a configuration that lists one', () => {
    expect(parseLiveWorkerEntry('10.0.0.0/33')).toMatch(/not a CIDR block/);
    expect(parseLiveWorkerEntry('http:worker')).toMatch(/not a host/);
    expect(parseLiveWorkerEntry('two words')).toMatch(/neither an IP address nor a host name/);
    expect(parseLiveWorkerEntry('worker:0')).toMatch(/no valid port/);
    expect(() => parseConfig({ KEEL_API_LIVE_WORKERS: '10.0.0.0/33' }, '/')).toThrow(/KEEL_API_LIVE_WORKERS/);
    expect(parseConfig({}, '/').tokens.liveWorkers).toEqual(loopback);
  });
});

describe('the request timeouts', () => {
  it('are 5 s for headers and 10 s for the whole request unless configured', () => {
    expect(parseConfig({}, '/').api.requestTimeouts).toEqual({ headersMs: 5_000, requestMs: 10_000 });
    expect(
      parseConfig({ KEEL_API_HEADERS_TIMEOUT_MS: '20000', KEEL_API_REQUEST_TIMEOUT_MS: '120000' }, '/').api
        .requestTimeouts,
    ).toEqual({ headersMs: 20_000, requestMs: 120_000 });
  });

  it('refuses a whole-request timeout shorter than the headers one', () => {
    expect(() =>
      parseConfig({ KEEL_API_HEADERS_TIMEOUT_MS: '20000', KEEL_API_REQUEST_TIMEOUT_MS: '10000' }, '/'),
    ).toThrow(/KEEL_API_REQUEST_TIMEOUT_MS/);
  });
});
