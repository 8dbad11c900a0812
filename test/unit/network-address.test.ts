import { canonicalHost, specialAddress, specialHost } from '../../platform/network-address';
import { bypassForms } from '../helpers/bypass-forms';

describe('canonical hosts', () => {
  it.each(bypassForms)('reads %s as %s, %s', (form, canonical, why) => {
    expect(canonicalHost(form)).toEqual({ kind: 'address', address: canonical });
    expect(specialAddress(canonical)).toMatch(why);
  });

  it.each([
    ['LOCALHOST', 'localhost', /loopback/],
    ['localhost.', 'localhost', /loopback/],
    ['api.localhost', 'api.localhost', /loopback/],
    ['Metadata.Google.Internal.', 'metadata.google.internal', /metadata/],
    ['metadata.goog', 'metadata.goog', /metadata/],
  ])('reads the name %s as %s, %s whatever it resolves to', (form, name, why) => {
    const host = canonicalHost(form);
    expect(host).toEqual({ kind: 'name', name });
    expect(specialHost(host as never)).toMatch(why);
  });

  it.each([
    ['1.1.1.1', '1.1.1.1'],
    ['93.184.215.14', '93.184.215.14'],
    ['2606:4700:4700::1111', '2606:4700:4700::1111'],
    ['::ffff:1.1.1.1', '1.1.1.1'],
    ['64:ff9b::101:101', '64:ff9b::101:101'],
    ['172.32.0.1', '172.32.0.1'],
  ])('leaves the public address %s alone (%s)', (form, canonical) => {
    expect(canonicalHost(form)).toEqual({ kind: 'address', address: canonical });
    expect(specialAddress(canonical)).toBeUndefined();
  });

  it('reads a name as its lower-case self without the trailing dot', () => {
    expect(canonicalHost('PyPI.org.')).toEqual({ kind: 'name', name: 'pypi.org' });
    expect(specialHost({ kind: 'name', name: 'pypi.org' })).toBeUndefined();
  });

  it.each([
    '127.0.0.1.',
    '1.2.3.4.5',
    '256.0.0.1',
    '08.0.0.1',
    '0x7f.0x',
    'example.123',
    '127.0.0.1 ',
    '127.0.0.1\tx',
    'local host',
    'ｌｏｃａｌｈｏｓｔ',
    'localhost..',
    '-bad-.org',
    '',
    '[127.0.0.1]',
  ])('refuses %j, which is neither an address nor a name', (form) => {
    expect(typeof canonicalHost(form)).toBe('string');
  });
});
