/**
 * POST /api/v1/auth/register on the wire: past the per-address limit, the login throttle's
 * 429 TOO_MANY_ATTEMPTS envelope with Retry-After; the address is the client IP the app
 * computes, so X-Forwarded-For counts only behind a trusted proxy.
 */
import { afterEach, expect, it } from 'vitest';
import { PASSWORD, expectError, httpTest, type HttpTest } from './helpers.js';

let t: HttpTest | null = null;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

let n = 0;
function register(headers: Record<string, string> = {}) {
  return t!.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: `wire${++n}@example.com`, password: PASSWORD },
    headers,
  });
}

it('answers 429 TOO_MANY_ATTEMPTS with Retry-After once the address used up its hour', async () => {
  t = await httpTest({ config: { registrationsPerHour: 2 } });
  expect((await register()).statusCode).toBe(201);
  expect((await register()).statusCode).toBe(201);
  const refused = await register();
  expect(expectError(refused, 429, 'TOO_MANY_ATTEMPTS')).toMatch(/Too many accounts created from this address/);
  expect(refused.headers['retry-after']).toBe('3600');
  expect(Object.keys(refused.json())).toEqual(['success', 'error']);
  expect(Object.keys(refused.json().error).sort()).toEqual(['code', 'message']);

  t.clock.advance(60 * 60_000);
  expect((await register()).statusCode).toBe(201);
});

it('counts each forwarded client on its own behind a trusted proxy', async () => {
  t = await httpTest({ config: { registrationsPerHour: 1, trustProxy: true } });
  expect((await register({ 'x-forwarded-for': '127.0.0.2' })).statusCode).toBe(201);
  expectError(await register({ 'x-forwarded-for': '127.0.0.2' }), 429, 'TOO_MANY_ATTEMPTS');
  expect((await register({ 'x-forwarded-for': '127.0.0.3' })).statusCode).toBe(201);
});

it('ignores a forged X-Forwarded-For when no proxy is trusted', async () => {
  t = await httpTest({ config: { registrationsPerHour: 1, trustProxy: false } });
  expect((await register({ 'x-forwarded-for': '127.0.0.2' })).statusCode).toBe(201);
  expectError(await register({ 'x-forwarded-for': '127.0.0.3' }), 429, 'TOO_MANY_ATTEMPTS');
});
