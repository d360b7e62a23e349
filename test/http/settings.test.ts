import { readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, expectError, httpTest, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let cookie: string;
beforeAll(async () => {
  t = await httpTest({ config: { port: 8787 } });
  ({ cookie } = await signIn(t.app));
});
afterAll(() => t.cleanup());

const settingsFile = () => path.join(t.dataDir, 'settings.json');
const put = (payload: object, headers: Record<string, string> = { cookie }) => t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers, payload });

describe('GET/PUT /api/v1/settings', () => {
  it('reads defaults before anything was saved', async () => {
    const res = await t.app.inject({ url: '/api/v1/settings', headers: { cookie } });
    expect(res.json().data).toEqual({
      port: 8787,
      lanAccess: false,
      keepApiRunningInTray: false,
      units: 'mm',
      legalMinimum: '1.6mm',
      shopName: '',
      restartRequired: false,
      server: {
        port: { inForce: 8787, source: 'default', setBy: null, saved: null, overridden: false, restartRequired: false },
        lanAccess: { inForce: false, source: 'default', setBy: null, saved: null, overridden: false, restartRequired: false },
        host: { inForce: '127.0.0.1', source: 'default', setBy: null, saved: null, overridden: false, restartRequired: false },
      },
    });
  });

  it('saves desk preferences into settings.json, keeping keys it does not manage', async () => {
    await writeFile(settingsFile(), JSON.stringify({ allowedHosts: ['pos.lan'], ui: { shopName: 'Old name' } }));
    const res = await put({ units: '32nds', legalMinimum: '2/32in', shopName: ' Reifen Müller ', keepApiRunningInTray: true });
    expect(res.json().data).toMatchObject({ units: '32nds', legalMinimum: '2/32in', shopName: 'Reifen Müller', restartRequired: false });
    const file = JSON.parse(await readFile(settingsFile(), 'utf8'));
    expect(file).toEqual({
      allowedHosts: ['pos.lan'],
      keepApiRunningInTray: true,
      ui: { shopName: 'Reifen Müller', units: '32nds', legalMinimum: '2/32in' },
    });
    expect((await readdir(t.dataDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('a new port or LAN access needs a restart; LAN access also binds every interface next time', async () => {
    expect((await put({ port: 9001 })).json().data).toMatchObject({ port: 9001, restartRequired: true });
    const lan = (await put({ port: 8787, lanAccess: true })).json().data;
    expect(lan).toMatchObject({ port: 8787, lanAccess: true, restartRequired: true });
    expect(JSON.parse(await readFile(settingsFile(), 'utf8'))).toMatchObject({ lanAccess: true, host: '0.0.0.0' });
    expect((await put({ lanAccess: false })).json().data.restartRequired).toBe(false);
    expect(JSON.parse(await readFile(settingsFile(), 'utf8')).host).toBe('127.0.0.1');
  });

  it('refuses bad values naming the field', async () => {
    expect(expectError(await put({ units: 'inches' }), 400, 'VALIDATION_ERROR')).toMatch(/units/);
    expect(expectError(await put({ port: 70000 }), 400, 'VALIDATION_ERROR')).toMatch(/port/);
    // a port the window's browser would refuse to load (ERR_UNSAFE_PORT), refused here, nothing saved
    for (const port of [6000, 2049, 10080]) {
      expect(expectError(await put({ port }), 400, 'VALIDATION_ERROR')).toMatch(new RegExp(`Port ${port} is one browsers refuse to open`));
    }
    expect((await t.app.inject({ url: '/api/v1/settings', headers: { cookie } })).json().data.port).not.toBe(6000);
  });

  it('needs the cookie session: anonymous 401, an API key 403', async () => {
    expectError(await t.app.inject({ url: '/api/v1/settings' }), 401, 'INVALID_SESSION');
    const key = await createKey(t.app, cookie);
    expectError(await put({ shopName: 'x' }, { 'x-api-key': key }), 403, 'FORBIDDEN');
  });

  it('concurrent saves do not drop each other’s changes', async () => {
    await Promise.all([put({ shopName: 'A' }), put({ units: 'mm' }), put({ keepApiRunningInTray: false })]);
    const file = JSON.parse(await readFile(settingsFile(), 'utf8'));
    expect(file).toMatchObject({ keepApiRunningInTray: false, ui: { shopName: 'A', units: 'mm' } });
  });
});

describe('the value in force and where it comes from (issue 42)', () => {
  it('a port set by TIREWEAR_PORT: the saved one is overridden, not "restart required"', async () => {
    const env = await httpTest({ config: { port: 43117, origins: { port: { source: 'env', setBy: 'TIREWEAR_PORT' } } } });
    try {
      const { cookie: owner } = await signIn(env.app);
      const saved = await env.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: { cookie: owner }, payload: { port: 43118 } });
      expect(saved.json().data).toMatchObject({
        port: 43118,
        restartRequired: false,
        server: { port: { inForce: 43117, source: 'env', setBy: 'TIREWEAR_PORT', saved: 43118, overridden: true, restartRequired: false } },
      });
      // the same value as in force: nothing overridden
      const same = await env.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: { cookie: owner }, payload: { port: 43117 } });
      expect(same.json().data.server.port).toMatchObject({ overridden: false, restartRequired: false, saved: 43117 });
    } finally {
      await env.cleanup();
    }
  });

  it('a value from settings.json changed since the start needs a restart; LAN access by a flag is overridden', async () => {
    const flag = await httpTest({
      config: { port: 8787, lanAccess: false, origins: { port: { source: 'file', setBy: null }, lanAccess: { source: 'flag', setBy: '--lan-access' } } },
    });
    try {
      const { cookie: owner } = await signIn(flag.app);
      const data = (
        await flag.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: { cookie: owner }, payload: { port: 9100, lanAccess: true } })
      ).json().data;
      expect(data.restartRequired).toBe(true);
      expect(data.server.port).toEqual({ inForce: 8787, source: 'file', setBy: null, saved: 9100, overridden: false, restartRequired: true });
      expect(data.server.lanAccess).toEqual({ inForce: false, source: 'flag', setBy: '--lan-access', saved: true, overridden: true, restartRequired: false });
      expect(data.server.host).toMatchObject({ inForce: '127.0.0.1', saved: '0.0.0.0', restartRequired: true });
    } finally {
      await flag.cleanup();
    }
  });

  it('PUT /settings takes only the form fields: sending back `server` is refused by name', async () => {
    expect(expectError(await put({ server: {} }), 400, 'VALIDATION_ERROR')).toMatch(/server/);
  });
});

describe('GET /connection: the addresses a POS can use', () => {
  it('loopback while LAN access is off; signed in only (an API key 403, anonymous 401)', async () => {
    const res = await t.app.inject({ url: '/api/v1/connection', headers: { cookie } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      port: 8787,
      lanAccess: false,
      hostname: null,
      addresses: [{ address: '127.0.0.1', family: 4, kind: 'loopback', url: 'http://127.0.0.1:8787' }],
    });
    expectError(await t.app.inject({ url: '/api/v1/connection' }), 401, 'INVALID_SESSION');
    const key = await createKey(t.app, cookie);
    expectError(await t.app.inject({ url: '/api/v1/connection', headers: { 'x-api-key': key } }), 403, 'FORBIDDEN');
  });

  it('with LAN access in force: this computer’s LAN addresses and its name', async () => {
    const lan = await httpTest({ config: { port: 8787, host: '0.0.0.0', lanAccess: true } });
    try {
      const { cookie: owner } = await signIn(lan.app);
      const data = (await lan.app.inject({ url: '/api/v1/connection', headers: { cookie: owner } })).json().data;
      expect(data.lanAccess).toBe(true);
      expect(data.addresses[0]).toEqual({ address: '127.0.0.1', family: 4, kind: 'loopback', url: 'http://127.0.0.1:8787' });
      const expected = Object.values(os.networkInterfaces())
        .flat()
        .filter((i) => i && !i.internal && i.family === 'IPv4' && !i.address.startsWith('169.254.'))
        .map((i) => i!.address);
      expect(data.addresses.filter((a: { kind: string }) => a.kind === 'lan').map((a: { address: string }) => a.address)).toEqual(expected);
      if (data.hostname !== null) expect(data.addresses.at(-1)).toMatchObject({ kind: 'name', address: data.hostname, family: null });
    } finally {
      await lan.cleanup();
    }
  });
});

describe('a settings.json damaged while the server runs', () => {
  it('GET and PUT answer 503 saying what to do, and the file is left as it is', async () => {
    const damaged = '{"port": 8787, "ui": {"units": "mm"';
    await writeFile(settingsFile(), damaged);
    for (const res of [await t.app.inject({ url: '/api/v1/settings', headers: { cookie } }), await put({ units: '32nds' })]) {
      const message = expectError(res, 503, 'STORAGE_UNAVAILABLE');
      expect(message).toBe(
        'settings.json in the data folder is damaged or not valid; correct it, or delete it to go back to the defaults, then restart TireWear',
      );
    }
    expect(await readFile(settingsFile(), 'utf8')).toBe(damaged);
    await writeFile(settingsFile(), '{}');
    expect((await put({ units: '32nds' })).statusCode).toBe(200);
  });
});
