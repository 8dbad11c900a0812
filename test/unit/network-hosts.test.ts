import {
  allowsHost,
  coveredBy,
  formatHostEntry,
  notCoveredBy,
  parseHostEntry,
  type HostEntry,
} from '../../platform/network-hosts';

const entries = (...raw: string[]): HostEntry[] => raw.map((entry) => parseHostEntry(entry) as HostEntry);

describe('network host entries', () => {
  it.each([
    [' PyPI.org ', { host: 'pypi.org' }],
    ['pypi.org.', { host: 'pypi.org' }],
    ['*.example.org', { host: '*.example.org' }],
    ['localhost:8443', { host: 'localhost', port: 8443 }],
    ['LOCALHOST.:8443', { host: 'localhost', port: 8443 }],
    ['[::1]:80', { host: '::1', port: 80 }],
    ['::1', { host: '::1' }],
    ['[0::ffff:7f00:1]:8080', { host: '127.0.0.1', port: 8080 }],
    ['0x7f.1:8080', { host: '127.0.0.1', port: 8080 }],
    ['2130706433:8080', { host: '127.0.0.1', port: 8080 }],
    ['[FD00:EC2::254]', { host: 'fd00:ec2::254' }],
    ['*', { host: '*' }],
    ['*:8080', { host: '*', port: 8080 }],
  ])('reads %j as its canonical entry', (raw, entry) => {
    expect(parseHostEntry(raw)).toEqual(entry);
  });

  it.each([
    ['http://example.org', /not a host/],
    ['a/b', /not a host/],
    ['example.org:0', /no valid port/],
    ['example.org:99999', /no valid port/],
    ['-bad-.org', /not a host/],
    ['', /not a host/],
    ['127.0.0.1.:80', /not a host/],
    ['1.2.3.4.5', /not a host/],
    ['[127.0.0.1]:80', /not a host/],
    ['[fe80::1%25eth0]:80', /zone id/],
    ['*.1.2.3', /covers names, not addresses/],
    ['*.0x7f', /covers names, not addresses/],
    ['*.localhost', /never covers a loopback name/],
  ])('refuses %j, saying why', (raw, why) => {
    expect(parseHostEntry(raw)).toMatch(why);
  });

  it('writes an entry back as the API stores it', () => {
    for (const raw of ['pypi.org', '*.example.org', 'localhost:8443', '[::1]:80', '127.0.0.1:80', '*'])
      expect(formatHostEntry(parseHostEntry(raw) as HostEntry)).toBe(raw);
  });

  it.each([
    ['pypi.org', 'pypi.org', 443, true],
    ['pypi.org', 'pypi.org', 80, true],
    ['pypi.org', 'pypi.org', 22, false],
    ['pypi.org', 'pypi.org', 8080, false],
    ['example.com:443', 'example.com', 443, true],
    ['example.com:443', 'example.com', 22, false],
    ['example.com:443', 'example.com', 80, false],
    ['*.pythonhosted.org', 'files.pythonhosted.org', 443, true],
    ['*.pythonhosted.org', 'files.pythonhosted.org', 22, false],
    ['*.pythonhosted.org', 'pythonhosted.org', 443, false],
    ['*.pythonhosted.org', 'evilpythonhosted.org', 443, false],
    ['*', 'anything.test', 443, true],
    ['*', 'anything.test', 22, false],
    ['*:8080', 'anything.test', 8080, true],
    ['*:8080', 'anything.test', 443, false],
    ['localhost:8443', 'localhost', 8443, true],
    ['localhost:8443', 'localhost', 8080, false],
    ['pypi.org', 'pypi.org.evil.test', 443, false],
  ])('entry %s lets a command reach %s on port %d: %s', (entry, host, port, allowed) => {
    expect(allowsHost(entries(entry), host, port)).toBe(allowed);
  });

  it.each([
    ['*.example.org', 'api.example.org', true],
    ['*.example.org', '*.a.example.org', true],
    ['*.example.org', '*.example.org', true],
    ['*.example.org', 'example.org', false],
    ['*.example.org', '*.org', false],
    ['*.example.org', '*', false],
    ['*.example.org', 'api.example.org:22', false],
    ['*', '*', true],
    ['*', 'pypi.org', true],
    ['*', '93.184.215.14', true],
    ['*', 'pypi.org:22', false],
    ['pypi.org:80,pypi.org:443', 'pypi.org', true],
    ['pypi.org:443', 'pypi.org', false],
    ['localhost:8443', 'localhost:8443', true],
    ['localhost:8443', 'localhost', false],
    ['localhost:8443', 'localhost:8444', false],
    ['localhost', 'localhost:443', true],
    ['localhost', 'localhost:8443', false],
    ['127.0.0.1:9000', '0x7f.1:9000', true],
    ['127.0.0.1:9000', '[::ffff:7f00:1]:9000', true],
    ['127.0.0.1:9000', '127.0.0.2:9000', false],
  ])('operator list %s covers a request for %s: %s', (granted, asked, covered) => {
    expect(coveredBy(entries(...granted.split(',')), parseHostEntry(asked) as HostEntry)).toBe(covered);
  });

  it.each([
    'localhost:8000',
    'localhost',
    'api.localhost:8233',
    '127.0.0.1:7233',
    '[0::ffff:7f00:1]:8000',
    '2130706433:8000',
    '0x7f.1:8000',
    '[::1]:8000',
    '169.254.169.254',
    '169.254.169.254:80',
    '[fd00:ec2::254]:80',
    'metadata.google.internal',
    '10.0.0.1:443',
    '100.64.0.1',
    '[64:ff9b::7f00:1]:8000',
    '0:8000',
  ])("never lets a wildcard, the operator's or the thread's, cover %s", (asked) => {
    const entry = parseHostEntry(asked) as HostEntry;
    for (const granted of [['*'], ['*', '*.google.internal', '*.example.org']])
      expect(notCoveredBy(entries(...granted), entry)).toMatch(/only an operator entry naming it exactly/);
  });
});
