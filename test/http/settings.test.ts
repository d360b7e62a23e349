import { readFile, readdir, writeFile } from 'node:fs/promises';
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
const put = (payload: object, headers: Record<string, string> = { cookie }) =>
  t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers, payload });

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

describe('a settings.json damaged while the server runs', () => {
  it('GET and PUT answer 503 saying what to do, and the file is left as it is', async () => {
    const damaged = '{"port": 8787, "ui": {"units": "mm"';
    await writeFile(settingsFile(), damaged);
    for (const res of [await t.app.inject({ url: '/api/v1/settings', headers: { cookie } }), await put({ units: '32nds' })]) {
      const message = expectError(res, 503, 'STORAGE_UNAVAILABLE');
      expect(message).toBe('settings.json in the data folder is damaged or not valid; correct it, or delete it to go back to the defaults, then restart TireWear');
    }
    expect(await readFile(settingsFile(), 'utf8')).toBe(damaged);
    await writeFile(settingsFile(), '{}');
    expect((await put({ units: '32nds' })).statusCode).toBe(200);
  });
});
