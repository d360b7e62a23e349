/** connectionInfo: which addresses GET /connection offers, from the interfaces and the bind address. */
import type os from 'node:os';
import { describe, expect, it } from 'vitest';
import { connectionInfo } from '../../src/core/http/routes/connection.js';

const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
  ({ address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null }) as unknown as os.NetworkInterfaceInfo;

const interfaces = {
  lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)],
  eth0: [nic('192.168.1.20', 'IPv4'), nic('fd00::20', 'IPv6'), nic('fe80::1', 'IPv6')],
  wlan0: [nic('10.0.0.7', 'IPv4'), nic('169.254.3.4', 'IPv4')],
};

describe('connectionInfo', () => {
  it('LAN access off: loopback only, no name', () => {
    expect(connectionInfo({ host: '127.0.0.1', lanAccess: false }, 8787, interfaces, 'SHOP-PC')).toEqual({
      port: 8787,
      lanAccess: false,
      hostname: null,
      addresses: [{ address: '127.0.0.1', family: 4, kind: 'loopback', url: 'http://127.0.0.1:8787' }],
    });
  });

  it('bound to 0.0.0.0 with LAN access: loopback, every routable IPv4 (no link-local), the name', () => {
    const info = connectionInfo({ host: '0.0.0.0', lanAccess: true }, 43117, interfaces, 'SHOP-PC');
    expect(info.hostname).toBe('SHOP-PC');
    expect(info.addresses.map((a) => [a.kind, a.url])).toEqual([
      ['loopback', 'http://127.0.0.1:43117'],
      ['lan', 'http://192.168.1.20:43117'],
      ['lan', 'http://10.0.0.7:43117'],
      ['name', 'http://SHOP-PC:43117'],
    ]);
  });

  it('bound to :: (both families): IPv6 addresses too, in brackets; never a zoned or link-local one', () => {
    const info = connectionInfo({ host: '::', lanAccess: true }, 8787, interfaces, 'shop-mac.local');
    expect(info.addresses.map((a) => a.url)).toEqual([
      'http://127.0.0.1:8787',
      'http://192.168.1.20:8787',
      'http://10.0.0.7:8787',
      'http://[fd00::20]:8787',
      'http://shop-mac.local:8787',
    ]);
    expect(info.addresses.find((a) => a.address === 'fd00::20')).toMatchObject({ family: 6, kind: 'lan' });
  });

  it('bound to one LAN address: that one alone (loopback does not reach it)', () => {
    const info = connectionInfo({ host: '192.168.1.20', lanAccess: true }, 8787, interfaces, 'SHOP-PC');
    expect(info.addresses.map((a) => a.url)).toEqual(['http://192.168.1.20:8787', 'http://SHOP-PC:8787']);
  });

  it('a name the Host check would not accept is not offered', () => {
    const info = connectionInfo({ host: '0.0.0.0', lanAccess: true }, 8787, interfaces, 'bad name_with space');
    expect(info.hostname).toBeNull();
    expect(info.addresses.some((a) => a.kind === 'name')).toBe(false);
  });
});
