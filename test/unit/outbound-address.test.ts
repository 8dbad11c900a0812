import { checkOutboundUrl, redactUrl, refusedAddress } from '../../platform/outbound-address';

describe('outbound addresses', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.8.9.10', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['fd12:3456::1', 'a private (unique local) address'],
    ['169.254.1.1', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['168.63.129.16', 'a cloud metadata address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['100.100.100.200', 'a cloud metadata address'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['0.0.0.0', 'an unspecified ("this network") address'],
    ['::', 'an unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['0::ffff:7f00:1', 'a loopback address'],
    ['::ffff:0:7f00:1', 'a reserved address'],
    ['::7f00:1', 'a reserved address'],
    ['2002:7f00:1::', 'a loopback address'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'a Teredo tunnel address'],
    ['0x7f.1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:a9fe:a9fe', 'a cloud metadata address'],
    ['64:ff9b::10.0.0.1', 'a private address'],
  ])('refuses %s as %s', (address, why) => {
    expect(refusedAddress(address)).toBe(why);
  });

  it.each(['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1', '11.0.0.1'])(
    'allows the public address %s',
    (address) => {
      expect(refusedAddress(address)).toBeUndefined();
    },
  );

  it.each([
    ['http://127.0.0.1:8080/hook', /points to 127\.0\.0\.1, a loopback address/],
    ['http://2130706433/hook', /points to 127\.0\.0\.1/],
    ['http://0x7f.1/hook', /points to 127\.0\.0\.1/],
    ['http://[::1]/hook', /points to ::1, a loopback address/],
    ['http://[2002:7f00:1::]/hook', /points to 2002:7f00:1::, a loopback address/],
    ['http://[::7f00:1]/hook', /a reserved address/],
    ['http://[::ffff:169.254.169.254]/latest/meta-data', /a cloud metadata address/],
    ['http://10.0.0.5/hook', /a private address/],
    ['http://169.254.169.254/latest/meta-data', /a cloud metadata address/],
    ['http://localhost:8080/hook', /names localhost, a local or metadata host/],
    ['http://api.localhost/hook', /a local or metadata host/],
    ['http://metadata.google.internal/computeMetadata/v1/', /a local or metadata host/],
    ['http://no-such-host.invalid/hook', /does not resolve/],
    ['ftp://example.com/hook', /is not http\(s\)/],
  ])('refuses %s', async (url, message) => {
    await expect(checkOutboundUrl(url, [])).rejects.toThrow(message);
  });

  it('reaches a loopback or private host the operator allowlisted, and only that host', async () => {
    await expect(checkOutboundUrl('http://127.0.0.1:9/hook', ['127.0.0.1'])).resolves.toBeUndefined();
    await expect(checkOutboundUrl('http://localhost:9/hook', ['localhost'])).resolves.toBeUndefined();
    await expect(checkOutboundUrl('http://10.0.0.1/hook', ['*'])).resolves.toBeUndefined();
    await expect(checkOutboundUrl('http://10.0.0.1/hook', ['127.0.0.1'])).rejects.toThrow(/private/);
  });

  it('logs a URL without its credentials or query', () => {
    expect(redactUrl('https://user:pass@hooks.example.com:8443/in?token=s3cret#x')).toBe(
      'https://hooks.example.com:8443/in',
    );
  });
});
