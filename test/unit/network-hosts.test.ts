import { allowsHost, coveredBy, parseHostEntry, type HostEntry } from '../../common/network-hosts';

const entries = (...raw: string[]): HostEntry[] => raw.map((entry) => parseHostEntry(entry) as HostEntry);

describe('network host entries', () => {
  it('parses hosts, wildcards, ports and IPs, and says what is wrong with anything else', () => {
    expect(parseHostEntry(' PyPI.org ')).toEqual({ host: 'pypi.org' });
    expect(parseHostEntry('*.example.org')).toEqual({ host: '*.example.org' });
    expect(parseHostEntry('localhost:8443')).toEqual({ host: 'localhost', port: 8443 });
    expect(parseHostEntry('[::1]:80')).toEqual({ host: '::1', port: 80 });
    expect(parseHostEntry('*')).toEqual({ host: '*' });
    for (const bad of ['http://example.org', 'a/b', 'example.org:0', 'example.org:99999', '-bad-.org', ''])
      expect(typeof parseHostEntry(bad)).toBe('string');
  });

  it('matches a host and port against entries', () => {
    const list = entries('pypi.org', '*.pythonhosted.org', 'localhost:8443');
    expect(allowsHost(list, 'PYPI.org', 443)).toBe(true);
    expect(allowsHost(list, 'files.pythonhosted.org', 443)).toBe(true);
    expect(allowsHost(list, 'pythonhosted.org', 443)).toBe(false);
    expect(allowsHost(list, 'evilpythonhosted.org', 443)).toBe(false);
    expect(allowsHost(list, 'localhost', 8443)).toBe(true);
    expect(allowsHost(list, 'localhost', 8080)).toBe(false);
    expect(allowsHost(list, 'pypi.org.evil.test', 443)).toBe(false);
  });

  it('covers a request only by what the operator granted', () => {
    const granted = entries('*.example.org', 'localhost:8443');
    const covered = (raw: string) => coveredBy(granted, parseHostEntry(raw) as HostEntry);
    expect(covered('api.example.org')).toBe(true);
    expect(covered('*.a.example.org')).toBe(true);
    expect(covered('*.example.org')).toBe(true);
    expect(covered('example.org')).toBe(false);
    expect(covered('*.org')).toBe(false);
    expect(covered('*')).toBe(false);
    expect(covered('localhost:8443')).toBe(true);
    expect(covered('localhost')).toBe(false);
    expect(coveredBy(entries('*'), parseHostEntry('*') as HostEntry)).toBe(true);
  });
});
