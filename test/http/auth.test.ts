import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { PASSWORD, createKey, expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
beforeAll(async () => {
  t = await httpTest();
});
afterAll(() => t.cleanup());

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers });

describe('register and login', () => {
  it('registers (201), refuses a taken email (409) and a short password naming the field (400)', async () => {
    const res = await post('/auth/register', { email: 'Owner@Example.com', password: PASSWORD });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ email: expect.stringMatching(/owner@example.com/i) });
    expect(res.json().data).not.toHaveProperty('passwordHash');
    expectError(await post('/auth/register', { email: 'owner@example.com', password: PASSWORD }), 409, 'CONFLICT');
    const short = await post('/auth/register', { email: 'x@example.com', password: 'short' });
    expect(expectError(short, 400, 'VALIDATION_ERROR')).toMatch(/password/);
    expect(expectError(await post('/auth/register', { password: PASSWORD }), 400, 'VALIDATION_ERROR')).toMatch(/email is required/);
  });

  it('login sets an HttpOnly, SameSite=Strict, Path=/ cookie living as long as the session, not Secure over http', async () => {
    const { email } = await signIn(t.app);
    const res = await post('/auth/login', { email, password: PASSWORD });
    const header = String(res.headers['set-cookie']);
    expect(header).toMatch(/^auth-token=[^;]+;/);
    expect(header).toMatch(/HttpOnly/);
    expect(header).toMatch(/SameSite=Strict/);
    expect(header).toMatch(/Path=\//);
    expect(Number(/Max-Age=(\d+)/.exec(header)?.[1])).toBeGreaterThan(3600);
    expect(header).not.toMatch(/Secure/);
  });

  it('a wrong password is 401 INVALID_CREDENTIALS and sets no cookie', async () => {
    const { email } = await signIn(t.app);
    const res = await post('/auth/login', { email, password: 'wrong password!' });
    expectError(res, 401, 'INVALID_CREDENTIALS');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('repeated wrong passwords are throttled: 429 TOO_MANY_ATTEMPTS with Retry-After', async () => {
    const { email } = await signIn(t.app);
    let res = await post('/auth/login', { email, password: 'wrong password!' });
    for (let i = 0; i < 10 && res.statusCode === 401; i++) res = await post('/auth/login', { email, password: 'wrong password!' });
    expectError(res, 429, 'TOO_MANY_ATTEMPTS');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('guesses sent all at once are counted as they arrive: the right password in a burst of 40 is refused with the rest', async () => {
    const { email } = await signIn(t.app);
    const guesses = [...Array.from({ length: 39 }, (_, i) => `wrong guess ${i}!`), PASSWORD];
    const answers = await Promise.all(guesses.map((password) => post('/auth/login', { email, password })));
    const counts = answers.reduce<Record<number, number>>((n, r) => ({ ...n, [r.statusCode]: (n[r.statusCode] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 401: 5, 429: 35 });
  });

  it('an email with a NUL or another control character is refused at registration and signs nobody in', async () => {
    for (const email of ['a\u0000@example.com', 'a\u0007b@example.com']) {
      expect(expectError(await post('/auth/register', { email, password: PASSWORD }), 400, 'VALIDATION_ERROR')).toMatch(/not a valid email/);
      expectError(await post('/auth/login', { email, password: PASSWORD }), 401, 'INVALID_CREDENTIALS');
    }
  });

  it('with registration "first", the first account registers and every later one is refused, signing in still works', async () => {
    const hub = await httpTest({ config: { registration: 'first' } });
    try {
      const register = (email: string) => hub.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD } });
      expect((await register('office@chain.example')).statusCode).toBe(201);
      expect(expectError(await register('stranger@example.com'), 403, 'FORBIDDEN')).toMatch(/Registration is closed on this server/);
      const login = await hub.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'office@chain.example', password: PASSWORD } });
      expect(login.statusCode).toBe(200);
    } finally {
      await hub.cleanup();
    }
  });

  it('logout ends the session and clears the cookie; the old cookie is then 401 and cleared again', async () => {
    const { cookie } = await signIn(t.app);
    const out = await post('/auth/logout', {}, { cookie });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/auth-token=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/);
    const stale = await t.app.inject({ url: '/api/v1/account', headers: { cookie } });
    expectError(stale, 401, 'INVALID_SESSION');
    expect(String(stale.headers['set-cookie'])).toMatch(/auth-token=;/);
  });

  it('a stale cookie does not stop logging in again', async () => {
    const { email } = await signIn(t.app);
    const res = await post('/auth/login', { email, password: PASSWORD }, { cookie: 'auth-token=stale' });
    expect(res.statusCode).toBe(200);
  });

  it('malformed JSON, a non-JSON body and a body over 64 KiB are refused in the envelope', async () => {
    const login = (contentType: string, payload: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': contentType }, payload });
    expectError(await login('application/json', '{"email": '), 400, 'VALIDATION_ERROR');
    expectError(await login('application/x-www-form-urlencoded', 'email=a&password=b'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const huge = await post('/auth/register', { email: 'big@example.com', password: 'p'.repeat(70 * 1024) });
    expectError(huge, 413, 'FILE_TOO_LARGE');
  });

  it('signs a Secure cookie when the request came over TLS (trusted proxy)', async () => {
    const proxied = await httpTest({ config: { trustProxy: true } });
    try {
      const { email } = await signIn(proxied.app);
      const res = await proxied.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: { 'x-forwarded-proto': 'https' },
        payload: { email, password: PASSWORD },
      });
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await proxied.cleanup();
    }
  });
});

describe('who is calling', () => {
  it('an account route without credentials is 401', async () => {
    expectError(await t.app.inject({ url: '/api/v1/account' }), 401, 'INVALID_SESSION');
    expectError(await t.app.inject({ url: '/api/v1/scans' }), 401, 'INVALID_SESSION');
  });

  it('a malformed, unknown or revoked key is 401 INVALID_API_KEY, never anonymous', async () => {
    const jpeg = await makeJpeg({ width: 300, height: 256 });
    for (const key of ['nope', `tw_${'a'.repeat(32)}`]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/analyze',
        headers: { 'x-api-key': key, ...imageForm(jpeg).headers },
        payload: imageForm(jpeg).payload,
      });
      expectError(res, 401, 'INVALID_API_KEY');
    }
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const keys = (await t.app.inject({ url: '/api/v1/keys', headers: { cookie } })).json().data.items;
    await t.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keys[0].id}`, headers: { cookie } });
    expectError(await t.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': key } }), 401, 'INVALID_API_KEY');
  });

  it('two X-API-Key headers are refused as such, even when both hold the same good key', async () => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    expect((await t.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': key } })).statusCode).toBe(200);
    const twice = await t.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': [key, key] } });
    expect(expectError(twice, 401, 'INVALID_API_KEY')).toBe('Send exactly one X-API-Key header');
  });

  it('the key wins over the cookie when both are sent', async () => {
    const a = await signIn(t.app);
    const b = await signIn(t.app);
    const keyOfB = await createKey(t.app, b.cookie);
    const res = await t.app.inject({ url: '/api/v1/account', headers: { cookie: a.cookie, 'x-api-key': keyOfB } });
    expect(res.json().data.account.email).toBe(b.email);
    const badKey = await t.app.inject({ url: '/api/v1/account', headers: { cookie: a.cookie, 'x-api-key': 'tw_bad' } });
    expectError(badKey, 401, 'INVALID_API_KEY');
  });
});

describe('API keys', () => {
  it('are created once with the secret, listed without it, revoked with DELETE', async () => {
    const { cookie } = await signIn(t.app);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie }, payload: { name: 'Counter POS' } });
    expect(created.statusCode).toBe(201);
    const { key, id, prefix } = created.json().data;
    expect(key).toMatch(/^tw_[A-Za-z0-9]{32}$/);
    expect(key.startsWith(prefix)).toBe(true);
    const list = await t.app.inject({ url: '/api/v1/keys', headers: { cookie } });
    expect(list.json().data.items).toEqual([expect.objectContaining({ id, name: 'Counter POS', revokedAt: null })]);
    expect(list.body).not.toContain(key);
    expect(list.body).not.toMatch(/hash|accountId/);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/keys/${id}`, headers: { cookie } });
    expect(del.json()).toEqual({ success: true, data: {} });
    expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/keys/${id}`, headers: { cookie } }), 404, 'NOT_FOUND');
  });

  it('a key cannot manage keys (403), even its own account', async () => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const headers = { 'x-api-key': key };
    expectError(await t.app.inject({ url: '/api/v1/keys', headers }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/keys', headers, payload: { name: 'x' } }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ method: 'DELETE', url: '/api/v1/keys/whatever', headers }), 403, 'FORBIDDEN');
    expect((await t.app.inject({ url: '/api/v1/account', headers })).statusCode).toBe(200);
  });

  it('a name is required', async () => {
    const { cookie } = await signIn(t.app);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie }, payload: {} });
    expect(expectError(res, 400, 'VALIDATION_ERROR')).toMatch(/name is required/);
  });
});

describe('licenses and account', () => {
  it('a scan pack adds 100 to the account; the same code again is 409; garbage is 422', async () => {
    const { cookie } = await signIn(t.app);
    const code = t.issueCode({ kind: 'pack' });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ license: { kind: 'pack', scans: 100 }, account: { packCredit: 100, plan: 'free' } });
    const again = await t.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code } });
    expectError(again, 409, 'LICENSE_ALREADY_REDEEMED');
    const forged = await t.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code: 'TWL1.abc.def' } });
    expectError(forged, 422, 'LICENSE_INVALID');
  });

  it('an expired pro code is 422 LICENSE_EXPIRED; a valid one makes the plan pro', async () => {
    const { cookie } = await signIn(t.app);
    const expired = t.issueCode({ kind: 'pro', expiresAt: '2020-01-01T00:00:00Z' });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code: expired } });
    expectError(res, 422, 'LICENSE_EXPIRED');
    const pro = t.issueCode({ kind: 'pro', expiresAt: '2027-12-31T00:00:00Z' });
    await t.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code: pro } });
    const account = (await t.app.inject({ url: '/api/v1/account', headers: { cookie } })).json().data;
    expect(account).toMatchObject({ plan: 'pro', proExpiresAt: '2027-12-31T00:00:00.000Z', allowance: { limit: null } });
  });
});
