import type { NetworkInterfaceInfo } from 'node:os';
import {
  loopbackLiveWorkers,
  parseLiveWorkerEntry,
  parseLiveWorkers,
  refusedLiveUrl,
} from '../../platform/live-workers';
import { parseConfig } from '../../platform/config';
import { reachableHost } from '../../worker/live-text-server';

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

describe('the address a worker bound to every interface advertises (decision 0461)', () => {
  const entry = (address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo =>
    family === 'IPv4'
      ? { address, netmask: '255.255.0.0', family, mac: '02:42:ac:12:00:05', internal, cidr: null }
      : {
          address,
          netmask: 'ffff:ffff:ffff:ffff::',
          family,
          mac: '02:42:ac:12:00:05',
          internal,
          cidr: null,
          scopeid: 0,
        };

  it('is a bound address itself', () => {
    expect(reachableHost('127.0.0.1', {})).toBe('127.0.0.1');
    expect(reachableHost('10.1.2.3', { eth0: [entry('172.18.0.5', 'IPv4')] })).toBe('10.1.2.3');
  });

  it("is the machine's first external IPv4 for a wildcard, else an external IPv6, else loopback", () => {
    const container = {
      lo: [entry('127.0.0.1', 'IPv4', true)],
      eth0: [entry('fe80::1', 'IPv6'), entry('fd00::5', 'IPv6'), entry('172.18.0.5', 'IPv4')],
    };
    expect(reachableHost('0.0.0.0', container)).toBe('172.18.0.5');
    expect(reachableHost('::', container)).toBe('172.18.0.5');
    expect(reachableHost('0.0.0.0', { eth0: [entry('fe80::1', 'IPv6'), entry('fd00::5', 'IPv6')] })).toBe(
      'fd00::5',
    );
    expect(reachableHost('0.0.0.0', { lo: [entry('127.0.0.1', 'IPv4', true)] })).toBe('127.0.0.1');
  });
});
