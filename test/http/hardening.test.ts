/**
 * The HTTP layer against the API audit of 2026-11-24: a bounded shutdown (M3), stalled uploads
 * that cannot lock others out of /analyze (M1), media types and empty JSON bodies (L3, L4), long
 * ids and double slashes (L6, L7), a key sent as a bearer token (L8), query parameters on
 * /analyze (L9) and `Expect: 100-continue` with an oversized body (L10).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config.js';
import { testConfig } from '../support/config.js';
import { isAppError } from '../../src/core/errors.js';
import type { BuildServerOptions } from '../../src/core/http/app.js';
import { admission } from '../../src/core/http/upload-admission.js';
import { createLogger } from '../../src/core/logger.js';
import { startServer, type RunningServer } from '../../src/core/server.js';
import { openSqliteStore } from '../../src/core/storage/sqlite/index.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { makeTestLicenseKeys } from '../support/licenses.js';
import { createKey, expectError, form, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

const licenseKeys = makeTestLicenseKeys();
const dirs: string[] = [];
let jpeg: Buffer;

beforeAll(async () => {
  jpeg = await makeJpeg({ width: 320, height: 256 });
});
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A listening server on a fresh data dir (FakeAnalyzer, ManualClock). */
async function start(options: BuildServerOptions = {}, config: Partial<Config> = {}): Promise<RunningServer> {
  const dataDir = await tempDir('tirewear-hardening-');
  return startServer(
    testConfig(dataDir, licenseKeys.publicKeyPem, { port: 0, ...config }),
    { analyzer: new FakeAnalyzer(), clock: new ManualClock(), logger: createLogger({ level: 'silent' }) },
    { logger: false, ...options },
  );
}

/** A raw connection: what it has received so far, and when it closed. */
function connect(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.on('data', (data) => (received += data.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    received: () => received,
    closed,
    /** Resolves with everything received once `pattern` matches it (or the socket closes). */
    async until(pattern: RegExp, timeoutMs = 5000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(received) && !socket.destroyed && Date.now() < deadline) await sleep(5);
      return received;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function uploadHead(contentType: string, contentLength: number, extra = ''): string {
  return `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${contentType}\r\n` + `Content-Length: ${contentLength}\r\n${extra}\r\n`;
}

describe('M3: shutdown is bounded', () => {
  it('close() ends after the grace period although an upload is stalled, and closes its connection', async () => {
    const grace = 300;
    const server = await start({ shutdownGraceMs: grace });
    const { payload, headers } = form([{ name: 'image', data: jpeg }]);
    const client = connect(server.url);
    client.socket.write(uploadHead(headers['content-type']!, payload.length));
    client.socket.write(payload.subarray(0, 2000));
    await sleep(150);

    const started = performance.now();
    const closing = server.close();
    const outcome = await Promise.race([closing.then(() => 'closed'), sleep(grace + 3000).then(() => 'still open')]);
    const elapsed = performance.now() - started;
    if (outcome !== 'closed') {
      client.socket.destroy();
      await closing;
    }
    expect(outcome).toBe('closed');
    expect(elapsed).toBeGreaterThanOrEqual(grace - 50); // the request in flight had its grace
    await client.closed;
  });
});

describe('M1: stalled uploads cannot lock others out of /analyze', () => {
  it('many stalled uploads from one address take a quarter of the slots; another address and this computer are still served', async () => {
    // Slots: 2 × (1 running + 3 waiting) = 8; one address holds at most 2.
    const t = await httpTest({ config: { lanAccess: true, host: '0.0.0.0', analysisConcurrency: 1, analysisQueueLimit: 3 } });
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const { payload, headers } = imageForm(jpeg);

    const bodies: PassThrough[] = [];
    const answers: Array<{ statusCode: number; json(): unknown; headers: Record<string, unknown> }> = [];
    const stalled = Array.from({ length: 8 }, () => {
      const body = new PassThrough();
      body.write(payload.subarray(0, 200));
      bodies.push(body);
      return t.app
        .inject({ method: 'POST', url: '/api/v1/analyze', headers: { ...headers, 'x-api-key': key }, payload: body, remoteAddress: '192.168.1.66' })
        .then((res) => (answers.push(res), res));
    });
    try {
      await vi.waitFor(() => expect(answers).toHaveLength(6), { timeout: 2000 });
      for (const busy of answers) {
        expect(busy.statusCode).toBe(503);
        expect(busy.json()).toMatchObject({ error: { code: 'SERVER_BUSY', message: expect.stringMatching(/from your address/) } });
        expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }

      const lan = await t.app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: { ...headers, 'x-api-key': key },
        payload,
        remoteAddress: '192.168.1.77',
      });
      expect(lan.statusCode).toBe(200);
      const local = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', headers, payload });
      expect(local.statusCode).toBe(200);
    } finally {
      for (const body of bodies) body.end();
      await Promise.all(stalled);
      await t.cleanup();
    }
  });

  it('a stalled upload is answered 408 in the envelope after the inactivity timeout', async () => {
    const server = await start({ uploadIdleTimeoutMs: 300 });
    try {
      const { payload, headers } = form([{ name: 'image', data: jpeg }]);
      const client = connect(server.url);
      const started = performance.now();
      client.socket.write(uploadHead(headers['content-type']!, payload.length));
      client.socket.write(payload.subarray(0, 2000));
      const response = await client.until(/\r\n\r\n\{.*\}$/s);
      expect(performance.now() - started).toBeLessThan(3000);
      expect(response).toMatch(/^HTTP\/1\.1 408 /);
      expect(response.toLowerCase()).toContain('connection: close');
      expect(response.toLowerCase()).toContain('x-ratelimit-limit: 3');
      expect(response).toMatch(/\{"success":false,"error":\{"code":"VALIDATION_ERROR","message":"The upload stopped: nothing arrived for 0\.3 s/);
      await client.closed;
    } finally {
      await server.close();
    }
  });

  it('an upload that keeps sending, slowly, is not cut off', async () => {
    const server = await start({ uploadIdleTimeoutMs: 300 });
    try {
      const { payload, headers } = form([{ name: 'image', data: jpeg }]);
      const client = connect(server.url);
      client.socket.write(uploadHead(headers['content-type']!, payload.length));
      const pieces = 8;
      const size = Math.ceil(payload.length / pieces);
      for (let i = 0; i < pieces; i++) {
        await sleep(120); // 8 × 120 ms: the whole upload takes three times the idle timeout
        client.socket.write(payload.subarray(i * size, (i + 1) * size));
      }
      const response = await client.until(/\r\n\r\n\{.*\}$/s);
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      client.socket.destroy();
    } finally {
      await server.close();
    }
  });

  describe('admission rules', () => {
    const take = (admit: (ip: string, uploader: string) => () => void, ip: string, uploader = `anonymous ${ip}`) => {
      try {
        return admit(ip, uploader);
      } catch (error) {
        if (isAppError(error) && error.code === 'SERVER_BUSY') return null;
        throw error;
      }
    };

    it('on a desk: one LAN address holds a quarter, the LAN together leaves this computer a quarter', () => {
      const admit = admission({ concurrency: 1, queueLimit: 3, hub: false }); // 8 slots, a quarter is 2
      expect([take(admit, '192.168.1.5'), take(admit, '192.168.1.5'), take(admit, '192.168.1.5')].map(Boolean)).toEqual([true, true, false]);
      expect(take(admit, '192.168.1.6')).not.toBeNull();
      expect(take(admit, '192.168.1.6')).not.toBeNull();
      expect(take(admit, '192.168.1.7')).not.toBeNull();
      expect(take(admit, '192.168.1.7')).not.toBeNull();
      expect(take(admit, '192.168.1.8')).toBeNull(); // 6 held by the LAN: the last 2 are this computer's
      expect(take(admit, '127.0.0.1')).not.toBeNull();
      expect(take(admit, '::1')).not.toBeNull();
      expect(take(admit, '127.0.0.1')).toBeNull(); // all 8 held
    });

    it('one caller, this computer included, takes three quarters at most: the last quarter is kept for others; a released slot is free again', () => {
      const admit = admission({ concurrency: 1, queueLimit: 3, hub: false }); // 8 slots, a quarter is 2
      // this computer's anonymous callers are one, whichever loopback address they use
      const anonymous = ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1', '127.0.0.1', '127.0.0.1'].map((ip) => take(admit, ip));
      expect(anonymous.every(Boolean)).toBe(true);
      expect(take(admit, '127.0.0.3')).toBeNull();
      // an account's key or session on this computer is another caller: the kept quarter is its
      const pro = [take(admit, '127.0.0.1', 'account pro'), take(admit, '127.0.0.1', 'account pro')];
      expect(pro.every(Boolean)).toBe(true);
      expect(take(admit, '127.0.0.1', 'account other')).toBeNull(); // all 8 held
      pro[0]!();
      pro[0]!(); // twice is once
      expect(take(admit, '127.0.0.1')).toBeNull(); // still holding six: the freed slot is not for it
      expect(take(admit, '192.168.1.5', 'account other')).not.toBeNull();
      expect(take(admit, '192.168.1.6', 'account other')).toBeNull();
      for (const release of anonymous) release!();
      expect(take(admit, '127.0.0.1')).not.toBeNull();
    });

    it('the message says why: the address, or the caller', () => {
      const admit = admission({ concurrency: 1, queueLimit: 3, hub: true });
      admit('203.0.113.1', 'account a');
      admit('203.0.113.1', 'account a');
      expect(() => admit('203.0.113.1', 'account a')).toThrow(/2 uploads from your address/);
      admit('203.0.113.2', 'account a');
      admit('203.0.113.3', 'account a');
      admit('203.0.113.4', 'account a');
      admit('203.0.113.5', 'account a');
      // six held by one account from many addresses: the last quarter is for other callers
      expect(() => admit('203.0.113.6', 'account a')).toThrow(/6 of your uploads are already in progress/);
      expect(() => admit('203.0.113.6', 'account b')).not.toThrow();
    });

    it('on a desk, each shop PC counts on its own over IPv6 too (a shop LAN shares one /64)', () => {
      const admit = admission({ concurrency: 1, queueLimit: 3, hub: false }); // a quarter is 2
      expect([take(admit, 'fd00::10'), take(admit, 'fd00::10'), take(admit, 'fd00::10')].map(Boolean)).toEqual([true, true, false]);
      expect(take(admit, 'fd00::11')).not.toBeNull();
      expect(take(admit, 'fe80::12%eth0')).not.toBeNull();
      expect(take(admit, '::ffff:192.168.1.5')).not.toBeNull();
      expect(take(admit, '192.168.1.5')).not.toBeNull(); // the same PC, its second
      expect(take(admit, '192.168.1.6')).toBeNull(); // the LAN's three quarters are held
    });

    it('on a hub, loopback (a proxy on the same machine) is capped like any address, and an IPv6 /64 is one address', () => {
      const admit = admission({ concurrency: 1, queueLimit: 3, hub: true });
      expect([take(admit, '127.0.0.1'), take(admit, '127.0.0.1'), take(admit, '127.0.0.1')].map(Boolean)).toEqual([true, true, false]);
      expect(take(admit, '2001:db8:1:2::1')).not.toBeNull();
      expect(take(admit, '2001:db8:1:2::ffff')).not.toBeNull();
      expect(take(admit, '2001:db8:1:2:abcd::9')).toBeNull();
      expect(take(admit, '203.0.113.9')).not.toBeNull();
    });
  });
});

describe('media types, empty bodies, odd paths and keys', () => {
  let t: HttpTest;
  let cookie: string;
  let key: string;
  let ui: HttpTest;
  beforeAll(async () => {
    t = await httpTest();
    ({ cookie } = await signIn(t.app));
    key = await createKey(t.app, cookie);
    const dir = await tempDir('tirewear-ui-');
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>TireWear UI</title>');
    await writeFile(path.join(dir, 'assets', 'app.js'), 'console.log("ui")');
    ui = await httpTest({ config: { rendererDir: dir } });
  });
  afterAll(async () => {
    await t.cleanup();
    await ui.cleanup();
  });

  const json = { 'content-type': 'application/json' };

  it('L3: a JSON route sent text/plain is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'text/plain' },
      payload: '{"email":"shop@example.com","password":"a long password"}',
    });
    expect(expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE')).toMatch(/application\/json/);
    const keys = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { cookie, 'content-type': 'text/plain; charset=utf-8' },
      payload: '{"name":"x"}',
    });
    expectError(keys, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('L4: Content-Type: application/json with an empty body works on routes that take no body', async () => {
    const scanId = (
      await t.app.inject({ method: 'POST', url: '/api/v1/analyze', headers: { ...imageForm(jpeg).headers, cookie }, payload: imageForm(jpeg).payload })
    ).json().data.scanId;
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${scanId}`, headers: { ...json, 'x-api-key': key }, payload: '' });
    expect(del.statusCode).toBe(200);
    await createKey(t.app, cookie, 'spare');
    const listed = (await t.app.inject({ url: '/api/v1/keys', headers: { cookie } })).json().data.items as Array<{ id: string; name: string }>;
    const id = listed.find((k) => k.name === 'spare')!.id;
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/keys/${id}`, headers: { ...json, cookie }, payload: ' \n' })).statusCode).toBe(200);

    const own = await signIn(t.app);
    const logout = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...json, cookie: own.cookie }, payload: '' });
    expect(logout.statusCode).toBe(200);
    expectError(await t.app.inject({ url: '/api/v1/account', headers: { cookie: own.cookie } }), 401, 'INVALID_SESSION');
  });

  it('L4: an empty body on a route that needs one is a 400 that says so; malformed JSON stays a 400', async () => {
    const empty = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: json, payload: '' });
    expect(expectError(empty, 400, 'VALIDATION_ERROR')).toMatch(/body is empty/);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { ...json, cookie }, payload: '{"name":' }), 400, 'VALIDATION_ERROR');
    const proto = await t.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { ...json, cookie }, payload: '{"name":"x","__proto__":{"admin":true}}' });
    expectError(proto, 400, 'VALIDATION_ERROR');
  });

  it('a JSON body is checked as sent: a wrong type, or a field a closed schema does not list, is 400, never converted or dropped', async () => {
    const put = (payload: unknown) => t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: { cookie }, payload: payload as object });
    expect(expectError(await put({ port: true }), 400, 'VALIDATION_ERROR')).toMatch(/port/);
    expect(expectError(await put({ lanAccess: null }), 400, 'VALIDATION_ERROR')).toMatch(/lanAccess/);
    expect(expectError(await put({ port: '8787' }), 400, 'VALIDATION_ERROR')).toMatch(/port/);
    const named = await t.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie }, payload: { name: true } });
    expect(expectError(named, 400, 'VALIDATION_ERROR')).toMatch(/name/);
    const force = await t.app.inject({ method: 'POST', url: '/api/v1/calibration', headers: { cookie }, payload: { force: true } });
    expect(expectError(force, 400, 'VALIDATION_ERROR')).toMatch(/force|additional/);
    // query strings still arrive as text and are read as numbers
    expect((await t.app.inject({ url: '/api/v1/scans?limit=5', headers: { cookie } })).statusCode).toBe(200);
  });

  it('L6: an id longer than the router takes is 404 NOT_FOUND, like an unknown one', async () => {
    for (const length of [100, 101, 128, 129, 500]) {
      const id = 'a'.repeat(length);
      // With the UI, its wildcard route also sees GETs the API router does not take.
      for (const [app, headers] of [
        [t.app, { 'x-api-key': key }],
        [ui.app, {}],
      ] as const) {
        expectError(await app.inject({ url: `/api/v1/scans/${id}`, headers }), 404, 'NOT_FOUND');
        expectError(await app.inject({ method: 'DELETE', url: `/api/v1/scans/${id}`, headers }), 404, 'NOT_FOUND');
        expectError(await app.inject({ url: `/api/v1/scans/${id}/image`, headers }), 404, 'NOT_FOUND');
      }
      expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/keys/${id}`, headers: { cookie } }), 404, 'NOT_FOUND');
    }
  });

  it('L7: a double slash in a path is 404 NOT_FOUND in the envelope, with or without the UI', async () => {
    for (const app of [t.app, ui.app]) {
      const res = await app.inject({ url: '/api/v1//health' });
      expect(expectError(res, 404, 'NOT_FOUND')).toBe('No route GET /api/v1//health');
      expectError(await app.inject({ url: '/api/v1//scans', headers: { 'x-api-key': key } }), 404, 'NOT_FOUND');
      expectError(await app.inject({ url: '/api//v1/health' }), 404, 'NOT_FOUND');
      expectError(await app.inject({ method: 'POST', url: '/api/v1//analyze', ...imageForm(jpeg) }), 404, 'NOT_FOUND');
    }
    expectError(await ui.app.inject({ url: '//assets/app.js' }), 404, 'NOT_FOUND');
    expect((await ui.app.inject({ url: '/assets/app.js' })).statusCode).toBe(200);
    // Still 405 where a route serves the path under another method.
    expectError(await ui.app.inject({ url: '/api/v1/analyze' }), 405, 'METHOD_NOT_ALLOWED');
  });

  it('L8: a key sent as Authorization: Bearer is 401 INVALID_API_KEY naming X-API-Key, never anonymous', async () => {
    const bearer = await t.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: { ...imageForm(jpeg).headers, authorization: `Bearer ${key}` },
      payload: imageForm(jpeg).payload,
    });
    expect(expectError(bearer, 401, 'INVALID_API_KEY')).toMatch(/X-API-Key/);
    expectError(await t.app.inject({ url: '/api/v1/scans', headers: { authorization: `bearer ${key}` } }), 401, 'INVALID_API_KEY');
    expectError(await t.app.inject({ url: '/api/v1/scans', headers: { authorization: 'Bearer tw_unknown' } }), 401, 'INVALID_API_KEY');
    // With the key in X-API-Key, a proxy's own Authorization is left alone; other schemes are not read.
    expect((await t.app.inject({ url: '/api/v1/scans', headers: { 'x-api-key': key, authorization: 'Bearer proxy-token' } })).statusCode).toBe(200);
    expectError(await t.app.inject({ url: '/api/v1/scans', headers: { authorization: 'Basic c2hvcDpwdw==' } }), 401, 'INVALID_SESSION');
    // Routes that never look at credentials do not either.
    expect((await t.app.inject({ url: '/api/v1/health', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
  });

  it('L8b: a key sent in any other header or scheme is 401 naming the header, never an anonymous scan', async () => {
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
    const misplaced: Array<[Record<string, string>, string]> = [
      [{ authorization: key }, 'Authorization'],
      [{ authorization: `ApiKey ${key}` }, 'Authorization'],
      [{ authorization: `Token ${key}` }, 'Authorization'],
      [{ authorization: basic(`${key}:`) }, 'Authorization: Basic'],
      [{ authorization: basic(`shop:${key}`) }, 'Authorization: Basic'],
      [{ 'api-key': key }, 'api-key'],
      [{ apikey: key }, 'apikey'],
      // a key of the right shape that does not exist is refused the same way (it was meant as one)
      [{ 'x-api-token': `tw_${'A'.repeat(32)}` }, 'x-api-token'],
      [{ 'x-auth-token': key }, 'x-auth-token'],
    ];
    for (const [headers, named] of misplaced) {
      const upload = imageForm(jpeg);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', headers: { ...upload.headers, ...headers }, payload: upload.payload });
      // named as the client wrote it (inject sends header names in lower case)
      const message = expectError(res, 401, 'INVALID_API_KEY');
      expect(message.toLowerCase()).toBe(`Send the API key in the X-API-Key header; it was sent in ${named}, which is not read`.toLowerCase());
    }
    // base64url in Basic too
    const url64 = Buffer.from(`${key}:`).toString('base64url');
    const upload = imageForm(jpeg);
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/analyze', headers: { ...upload.headers, authorization: `Basic ${url64}` }, payload: upload.payload }),
      401,
      'INVALID_API_KEY',
    );
    // text that merely contains a key-like string, in headers no key is sent in, is no key
    const { cookie } = await signIn(t.app);
    const lookalike = `tw_${'B'.repeat(32)}`;
    for (const headers of [
      { referer: `http://127.0.0.1/history?note=${lookalike}` },
      { 'x-request-id': lookalike },
      { 'x-amzn-oidc-data': `eyJ0-${lookalike}-sig` },
      { authorization: `Digest username="${lookalike}", realm="shop"` },
    ]) {
      expect((await t.app.inject({ url: '/api/v1/scans', headers: { cookie, ...headers } })).statusCode).toBe(200);
    }
    // a proxy's own Authorization that holds no key is still left alone, with or without X-API-Key
    expectError(await t.app.inject({ url: '/api/v1/scans', headers: { authorization: basic('shop:secret') } }), 401, 'INVALID_SESSION');
    expect((await t.app.inject({ url: '/api/v1/scans', headers: { 'x-api-key': key, authorization: basic(`x:${key}`) } })).statusCode).toBe(200);
  });

  it('L9: a query parameter on POST /analyze is 400 VALIDATION_ERROR naming it', async () => {
    const upload = imageForm(jpeg);
    const verbose = await t.app.inject({
      method: 'POST',
      url: '/api/v1/analyze?verbose=1',
      headers: { ...upload.headers, 'x-api-key': key },
      payload: upload.payload,
    });
    expect(expectError(verbose, 400, 'VALIDATION_ERROR')).toMatch(/Query parameter "verbose".*form field/);
    expect(verbose.headers['x-ratelimit-limit']).toBe('10');
    const typo = await t.app.inject({ method: 'POST', url: '/api/v1/analyze?vehcle=AB-1', headers: upload.headers, payload: upload.payload });
    expect(expectError(typo, 400, 'VALIDATION_ERROR')).toMatch(/"vehcle"/);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/analyze?', headers: upload.headers, payload: upload.payload })).statusCode).toBe(200);
  });
});

describe('L10: Expect: 100-continue', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.close());

  it('an oversized Content-Length is answered 413 in the envelope, never 100 Continue', async () => {
    const client = connect(server.url);
    client.socket.write(uploadHead('multipart/form-data; boundary=XB', 11 * 1024 * 1024, 'Expect: 100-continue\r\n'));
    const response = await client.until(/\r\n\r\n\{.*\}$/s);
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(response).not.toMatch(/100 Continue/);
    expect(response).toMatch(/"code":"FILE_TOO_LARGE"/);
    await client.closed;
  });

  it('a JSON body over 64 KiB is refused the same way; a refusal on the headers sends no 100 either', async () => {
    const big = connect(server.url);
    big.socket.write(
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${200 * 1024}\r\nExpect: 100-continue\r\n\r\n`,
    );
    const tooBig = await big.until(/\r\n\r\n\{.*\}$/s);
    expect(tooBig).toMatch(/^HTTP\/1\.1 413 [\s\S]*"code":"FILE_TOO_LARGE"/);
    await big.closed;

    const badKey = connect(server.url);
    badKey.socket.write(uploadHead('multipart/form-data; boundary=XB', 5000, 'X-API-Key: tw_nope\r\nExpect: 100-continue\r\n'));
    expect(await badKey.until(/\r\n\r\n\{.*\}$/s)).toMatch(/^HTTP\/1\.1 401 [\s\S]*"code":"INVALID_API_KEY"/);
    await badKey.closed;
  });

  it('an acceptable upload or JSON body gets 100 Continue, then its answer', async () => {
    const { payload, headers } = form([{ name: 'image', data: jpeg }]);
    const client = connect(server.url);
    client.socket.write(uploadHead(headers['content-type']!, payload.length, 'Expect: 100-continue\r\n'));
    expect(await client.until(/^HTTP\/1\.1 100 Continue\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    client.socket.write(payload);
    const response = await client.until(/\r\n\r\n\{.*\}$/s);
    expect(response).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    client.socket.destroy();

    const body = '{"email":"nobody@example.com","password":"a long password"}';
    const login = connect(server.url);
    login.socket.write(
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await login.until(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    login.socket.write(body);
    expect(await login.until(/\r\n\r\n\{.*\}$/s)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 [\s\S]*"code":"INVALID_CREDENTIALS"/);
    login.socket.destroy();
  });
});

describe('a caller with no scans left is told before sending the photo', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.close());

  const upload = async (shade: number, extra = '') => {
    const { payload, headers } = form([{ name: 'image', data: await makeJpeg({ width: 300, height: 256, shade }) }]);
    return { payload, head: uploadHead(headers['content-type']!, payload.length, extra) };
  };

  it('with Expect: 100-continue the 429 comes instead of 100 Continue (no photo sent); without it the 429 comes on the headers too, the body sent anyway and read before the connection closes', async () => {
    for (let i = 0; i < 3; i++) {
      const { payload, head } = await upload(40 + i * 30);
      const client = connect(server.url);
      client.socket.write(head);
      client.socket.write(payload);
      expect(await client.until(/\r\n\r\n\{.*\}$/s)).toMatch(/^HTTP\/1\.1 200 /);
      client.socket.destroy();
    }

    const waiting = connect(server.url);
    waiting.socket.write((await upload(200, 'Expect: 100-continue\r\n')).head);
    const refused = await waiting.until(/\r\n\r\n\{.*\}$/s);
    expect(refused).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused).not.toMatch(/100 Continue/);
    expect(refused).toMatch(/"code":"RATE_LIMIT_EXCEEDED"/);
    expect(refused).toMatch(/\r\nx-ratelimit-remaining: 0\r\n/i);
    expect(refused).toMatch(/\r\nretry-after: [1-9]\d*\r\n/i);
    waiting.socket.destroy();

    // A client that sends the body at once gets the same answer; the body is read, then the connection closes (linger.ts).
    const eager = connect(server.url);
    const whole = await upload(210);
    eager.socket.write(whole.head);
    eager.socket.write(whole.payload);
    expect(await eager.until(/\r\n\r\n\{.*\}$/s)).toMatch(/^HTTP\/1\.1 429 [\s\S]*connection: close[\s\S]*"code":"RATE_LIMIT_EXCEEDED"/i);
    await eager.closed;

    // With an Idempotency-Key the photo is asked for: a retry of a scan already made gets its stored answer.
    const retry = connect(server.url);
    retry.socket.write((await upload(220, 'Expect: 100-continue\r\nIdempotency-Key: RO-17-FL\r\n')).head);
    expect(await retry.until(/^HTTP\/1\.1 100 Continue\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue/);
    retry.socket.destroy();
  });
});

describe('upload slots and a connection that closes while the request is checked', () => {
  it('a client that hangs up during the allowance check gives its slot back (a slow store: a hub on PostgreSQL)', async () => {
    const dataDir = await tempDir('tirewear-slots-');
    const store = openSqliteStore({ file: path.join(dataDir, 'slow.db') });
    const usage = store.usage.usage.bind(store.usage);
    // every allowance read takes 50 ms, as a database across the network may
    store.usage.usage = async (...args) => {
      await sleep(50);
      return usage(...args);
    };
    const server = await startServer(
      testConfig(dataDir, licenseKeys.publicKeyPem, { port: 0, analysisConcurrency: 1, analysisQueueLimit: 1 }),
      { analyzer: new FakeAnalyzer(), clock: new ManualClock(), logger: createLogger({ level: 'silent' }), store },
      { logger: false },
    );
    try {
      const { payload, headers } = form([{ name: 'image', data: jpeg }]);
      // more hang-ups than there are slots (2 × (1 + 1)), each while its allowance is being read
      for (let i = 0; i < 6; i++) {
        const client = connect(server.url);
        client.socket.write(uploadHead(headers['content-type']!, payload.length, 'Expect: 100-continue\r\n'));
        await sleep(10);
        client.socket.destroy();
        await client.closed;
      }
      await sleep(100);
      const client = connect(server.url);
      client.socket.write(uploadHead(headers['content-type']!, payload.length));
      client.socket.write(payload);
      expect(await client.until(/\r\n\r\n\{.*\}$/s)).toMatch(/^HTTP\/1\.1 200 /);
      client.socket.destroy();
    } finally {
      await server.close();
    }
  });
});
