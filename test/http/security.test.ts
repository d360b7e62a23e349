import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { tempSqliteStore } from '../support/store.js';
import { createKey, expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let jpeg: Buffer;
beforeAll(async () => {
  t = await httpTest({ config: { allowedHosts: ['tirewear.shop.lan'] } });
  jpeg = await makeJpeg({ width: 300, height: 256 });
});
afterAll(() => t.cleanup());

const health = (headers: Record<string, string>, remoteAddress?: string) =>
  t.app.inject({ url: '/api/v1/health', headers, ...(remoteAddress ? { remoteAddress } : {}) });

describe('Host allow-list (DNS rebinding)', () => {
  it.each(['localhost', 'localhost:8787', '127.0.0.1:8787', '[::1]:8787', '[::1]', 'TireWear.Shop.Lan:8787'])('accepts %s', async (host) => {
    expect((await health({ host })).statusCode).toBe(200);
  });

  it.each(['evil.example', 'evil.example:8787', 'localhost.evil.example', '127.0.0.1.nip.io', '192.168.1.20:8787'])(
    'refuses %j with 403, on every path',
    async (host) => {
      expect(expectError(await health({ host }), 403, 'FORBIDDEN')).toMatch(/Host/);
      expectError(await t.app.inject({ url: '/', headers: { host } }), 403, 'FORBIDDEN');
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/nope', headers: { host } }), 403, 'FORBIDDEN');
    },
  );
});

describe('Origin check (CSRF)', () => {
  it('refuses a state-changing request from another origin, even anonymous', async () => {
    const upload = imageForm(jpeg);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: { ...upload.headers, origin: 'https://evil.example' },
      payload: upload.payload,
    });
    expect(expectError(res, 403, 'FORBIDDEN')).toMatch(/Cross-origin/);
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { origin: 'null' }, payload: {} });
    expectError(login, 403, 'FORBIDDEN');
  });

  it('refuses a cookie read from another origin or another port of localhost', async () => {
    const { cookie } = await signIn(t.app);
    expectError(await t.app.inject({ url: '/api/v1/account', headers: { cookie, origin: 'http://localhost:3000' } }), 403, 'FORBIDDEN');
    const img = await t.app.inject({ url: '/api/v1/account', headers: { cookie, 'sec-fetch-site': 'same-site' } });
    expectError(img, 403, 'FORBIDDEN');
  });

  it('accepts the page’s own origin, and callers without Origin (POS software)', async () => {
    const { cookie } = await signIn(t.app);
    const own = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { cookie, host: '127.0.0.1:8787', origin: 'http://127.0.0.1:8787', 'sec-fetch-site': 'same-origin' },
      payload: { name: 'x' },
    });
    expect(own.statusCode).toBe(201);
    expect((await t.app.inject({ url: '/api/v1/account', headers: { cookie } })).statusCode).toBe(200);
  });

  it('never sends CORS headers; a preflight is 405', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/analyze',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});

describe('LAN callers', () => {
  it('are refused while LAN access is off, even with a key', async () => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const res = await health({ 'x-api-key': key }, '192.168.1.20');
    expect(expectError(res, 403, 'FORBIDDEN')).toMatch(/LAN access is off/);
  });

  describe('with LAN access on', () => {
    let lan: HttpTest;
    let key: string;
    let cookie: string;
    beforeAll(async () => {
      lan = await httpTest({ config: { lanAccess: true, host: '0.0.0.0' } });
      ({ cookie } = await signIn(lan.app));
      key = await createKey(lan.app, cookie);
    });
    afterAll(() => lan.cleanup());

    const fromLan = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET', payload?: Buffer) =>
      lan.app.inject({ method, url, headers, remoteAddress: '192.168.1.20', ...(payload ? { payload } : {}) });

    it('need an API key: the cookie is not enough', async () => {
      expect(expectError(await fromLan('/api/v1/account', { cookie }), 403, 'FORBIDDEN')).toMatch(/requires an API key/);
      const upload = imageForm(jpeg);
      expectError(await fromLan('/api/v1/analyze', upload.headers, 'POST', upload.payload), 403, 'FORBIDDEN');
      expectError(await fromLan('/'), 403, 'FORBIDDEN');
    });

    it('with a key can analyze; a bad key is 401', async () => {
      const upload = imageForm(jpeg);
      const res = await fromLan('/api/v1/analyze', { ...upload.headers, 'x-api-key': key }, 'POST', upload.payload);
      expect(res.statusCode).toBe(200);
      expectError(await fromLan('/api/v1/account', { 'x-api-key': 'tw_nope' }), 401, 'INVALID_API_KEY');
    });

    it('may not register, sign in or out, whatever key they send (sessions are for the shop computer itself)', async () => {
      const json = { 'content-type': 'application/json' };
      for (const headers of [{ 'x-api-key': 'junk' }, { 'x-api-key': key }]) {
        for (const path of ['/api/v1/auth/register', '/api/v1/auth/login', '/api/v1/auth/logout', '/api/v1/%61uth/register', '/api/v1/auth/%6Cogin']) {
          const body = Buffer.from(JSON.stringify({ email: 'lan@example.com', password: 'a long enough password' }));
          const res = await fromLan(path, { ...json, ...headers }, 'POST', body);
          expect(expectError(res, 403, 'FORBIDDEN')).toMatch(/signed in to on the shop computer itself/);
        }
      }
    });

    it('may read /health without a key, and may not touch settings even with one', async () => {
      expect((await fromLan('/api/v1/health')).statusCode).toBe(200);
      expectError(await fromLan('/api/v1/settings', { 'x-api-key': key }), 403, 'FORBIDDEN');
    });

    it('may use this machine’s LAN address as Host', async () => {
      const address = Object.values(os.networkInterfaces())
        .flat()
        .find((info) => info && info.family === 'IPv4' && !info.internal)?.address;
      if (!address) return;
      expect((await fromLan('/api/v1/health', { host: `${address}:8787` })).statusCode).toBe(200);
      expect((await health({ host: `${address}:8787` })).statusCode).toBe(403);
    });

    it('may call this computer by its own name (SHOP-PC, shop-pc.local), as Windows and macOS POS setups do', async () => {
      const short = os.hostname().toLowerCase().split('.')[0]!;
      for (const host of [`${short.toUpperCase()}:8787`, `${short}.local:8787`, os.hostname()]) {
        expect((await fromLan('/api/v1/health', { host })).statusCode, host).toBe(200);
      }
      // not with LAN access off, and never a name merely containing it
      expect((await health({ host: `${short}:8787` })).statusCode).toBe(403);
      expectError(await fromLan('/api/v1/health', { host: `${short}.evil.example` }), 403, 'FORBIDDEN');
    });
  });
});

describe('a desk bound to one LAN address of its own', () => {
  const OWN = '198.51.100.7'; // documentation range: never this machine's own
  let own: HttpTest;
  beforeAll(async () => {
    own = await httpTest({ config: { lanAccess: true, host: OWN } });
  });
  afterAll(async () => {
    await own.cleanup();
  });

  const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false, scopeid?: number) => ({
    address,
    netmask: family === 'IPv4' ? '255.255.255.0' : 'ffff:ffff:ffff:ffff::',
    family,
    mac: '00:00:00:00:00:00',
    internal,
    cidr: null,
    ...(scopeid === undefined ? {} : { scopeid }),
  });
  /** This computer's interfaces as a Mac has them (fe80::1 on the loopback interface), plus OWN on eth9. */
  function withOwnAddress<T>(run: () => Promise<T>): Promise<T> {
    const interfaces = vi.spyOn(os, 'networkInterfaces').mockReturnValue({
      lo0: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true), iface('fe80::1', 'IPv6', true, 1)],
      eth9: [iface(OWN, 'IPv4'), iface('fe80::aede:48ff:fe00:1122', 'IPv6', false, 4)],
    } as ReturnType<typeof os.networkInterfaces>);
    return run().finally(() => interfaces.mockRestore());
  }
  const fromHere = { host: `${OWN}:8787`, origin: `http://${OWN}:8787` };

  it("takes its own window (a caller from one of this computer's addresses) as this computer: signed in, settings open", async () => {
    const { cookie } = await signIn(own.app);
    await withOwnAddress(async () => {
      expect((await own.app.inject({ url: '/', headers: fromHere, remoteAddress: OWN })).statusCode).not.toBe(403);
      const account = await own.app.inject({ url: '/api/v1/account', headers: { ...fromHere, cookie }, remoteAddress: OWN });
      expect(account.statusCode).toBe(200);
      const settings = await own.app.inject({ url: '/api/v1/settings', headers: { ...fromHere, cookie }, remoteAddress: `::ffff:${OWN}` });
      expect(settings.statusCode).toBe(200);
      // another computer of the LAN is still a LAN caller: a key, and no settings
      const other = await own.app.inject({ url: '/api/v1/account', headers: { ...fromHere, cookie }, remoteAddress: '198.51.100.8' });
      expect(expectError(other, 403, 'FORBIDDEN')).toMatch(/requires an API key/);
    });
    // once the address is no longer this computer's (DHCP gave it away), neither is the caller
    const gone = await own.app.inject({ url: '/api/v1/account', headers: { ...fromHere, cookie }, remoteAddress: OWN });
    expectError(gone, 403, 'FORBIDDEN');
  });

  it("never takes a link-local or zoned address for this computer (fe80::1 is a Mac's loopback interface and many routers' address)", async () => {
    const { cookie } = await signIn(own.app);
    await withOwnAddress(async () => {
      for (const remoteAddress of ['fe80::1', 'fe80::1%en0', 'fe80::aede:48ff:fe00:1122', 'fe80::aede:48ff:fe00:1122%eth9']) {
        const res = await own.app.inject({ url: '/api/v1/settings', headers: { ...fromHere, cookie }, remoteAddress });
        expectError(res, 403, 'FORBIDDEN');
      }
    });
  });
});

describe('a hub (hub mode) behind its proxy', () => {
  let hub: HttpTest;
  let store: Awaited<ReturnType<typeof tempSqliteStore>>;
  let owner: { cookie: string };
  beforeAll(async () => {
    // The store is a temp SQLite one; databaseUrl only switches the server into hub mode.
    store = await tempSqliteStore();
    hub = await httpTest({ store: store.store, config: { databaseUrl: 'postgres://hub.invalid/tirewear', host: '0.0.0.0' } });
    // the hub's owner registers first (its settings are the owner's); later accounts a minute on
    owner = await signIn(hub.app);
    hub.clock.advance(60_000);
  });
  afterAll(async () => {
    await hub.cleanup();
    await store.cleanup();
  });

  it('serves remote browsers and anonymous callers without the desk LAN rule', async () => {
    const remote = { remoteAddress: '203.0.113.9' };
    expect((await hub.app.inject({ url: '/api/v1/health', ...remote })).statusCode).toBe(200);
    const { cookie } = await signIn(hub.app);
    const account = await hub.app.inject({ url: '/api/v1/account', headers: { cookie }, ...remote });
    expect(account.statusCode).toBe(200);
    const upload = imageForm(jpeg);
    const scan = await hub.app.inject({ method: 'POST', url: '/api/v1/analyze', ...upload, ...remote });
    expect(scan.statusCode).toBe(200);
  });

  it('keeps the desk-only routes (settings, models) to loopback, even from its own address (its proxy on the same computer)', async () => {
    const { cookie } = owner;
    const OWN = '198.51.100.9';
    const interfaces = vi.spyOn(os, 'networkInterfaces').mockReturnValue({
      eth0: [{ address: OWN, netmask: '255.255.255.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: false, cidr: `${OWN}/24` }],
    });
    try {
      // the proxy connects from the hub's own address on behalf of any internet caller
      const res = await hub.app.inject({ url: '/api/v1/settings', headers: { cookie }, remoteAddress: OWN });
      expect(expectError(res, 403, 'FORBIDDEN')).toMatch(/computer running TireWear/);
    } finally {
      interfaces.mockRestore();
    }
    expect((await hub.app.inject({ url: '/api/v1/settings', headers: { cookie } })).statusCode).toBe(200);
  });

  it('still refuses foreign Host headers', async () => {
    const res = await hub.app.inject({ url: '/api/v1/health', headers: { host: 'evil.example' }, remoteAddress: '203.0.113.9' });
    expectError(res, 403, 'FORBIDDEN');
  });
});

describe('response headers', () => {
  it('every answer carries the security headers, errors and pages included, and no CORS', async () => {
    for (const res of [
      await t.app.inject({ url: '/api/v1/health' }),
      await t.app.inject({ url: '/api/v1/nope' }),
      await t.app.inject({ url: '/api/v1/health', headers: { host: 'evil.example' } }),
      await t.app.inject({ url: '/' }),
    ]) {
      expect(res.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
      });
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('API answers are not cached', async () => {
    expect((await t.app.inject({ url: '/api/v1/health' })).headers['cache-control']).toBe('no-store');
  });
});

describe('ownHostNames', () => {
  it('gives the full name, the short one and its .local form, lower case; nothing for an odd name', async () => {
    const { ownHostNames } = await import('../../src/core/http/security.js');
    expect(ownHostNames('SHOP-PC')).toEqual(['shop-pc', 'shop-pc.local']);
    expect(ownHostNames('Shop-Mac.local')).toEqual(['shop-mac.local', 'shop-mac']);
    expect(ownHostNames('till2.branch.example.com.')).toEqual(['till2.branch.example.com', 'till2', 'till2.local']);
    expect(ownHostNames('')).toEqual([]);
    expect(ownHostNames('bad name')).toEqual([]);
  });
});
