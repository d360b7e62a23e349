/**
 * TIREWEAR_TRUST_PROXY: behind a reverse proxy every request comes from the proxy, so
 * anonymous metering must read the caller from X-Forwarded-For, and only when told to
 * (otherwise anyone could pick a fresh "IP" per request). Loopback client addresses keep
 * these requests clear of the LAN gate, which is not what is under test here.
 */
import { afterEach, beforeAll, expect, it, vi } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, httpTest, imageForm, signIn, type HttpTest } from '../http/helpers.js';

let t: HttpTest | null = null;
let jpeg: Buffer;
beforeAll(async () => {
  jpeg = await makeJpeg({ width: 320, height: 256 });
});
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

async function anonymous(forwardedFor: string, headers: Record<string, string> = {}): Promise<number> {
  const upload = imageForm(jpeg);
  const res = await t!.app.inject({
    method: 'POST',
    url: '/api/v1/analyze',
    payload: upload.payload,
    headers: { ...upload.headers, 'x-forwarded-for': forwardedFor, ...headers },
  });
  return res.statusCode;
}

it('meters each forwarded client on its own when the proxy is trusted', async () => {
  t = await httpTest({ config: { trustProxy: true } });
  for (let i = 0; i < 3; i++) expect(await anonymous('127.0.0.2')).toBe(200);
  expect(await anonymous('127.0.0.2')).toBe(429);
  expect(await anonymous('127.0.0.3')).toBe(200);
});

it('ignores X-Forwarded-For when the proxy is not trusted', async () => {
  t = await httpTest({ config: { trustProxy: false } });
  for (let i = 0; i < 3; i++) expect(await anonymous(`127.0.0.${10 + i}`)).toBe(200);
  expect(await anonymous('127.0.0.20')).toBe(429);
});

it('serves a key holder forwarded from another network when LAN access is on', async () => {
  t = await httpTest({ config: { trustProxy: '127.0.0.1', lanAccess: true } });
  const { cookie } = await signIn(t.app);
  const key = await createKey(t.app, cookie);
  expect(await anonymous('198.51.100.23', { 'x-api-key': key })).toBe(200);
});

it('says once in the log when X-Forwarded-For comes from a proxy it does not trust', async () => {
  t = await httpTest({ config: { trustProxy: '10.0.0.1' } }); // the requests come from 127.0.0.1
  const warn = vi.spyOn(t.core.logger, 'warn');
  expect(await anonymous('198.51.100.23')).toBe(200);
  expect(await anonymous('198.51.100.24')).toBe(200);
  const said = warn.mock.calls.filter(([, message]) => String(message).includes('TIREWEAR_TRUST_PROXY does not trust'));
  expect(said).toHaveLength(1);
  expect(said[0]![0]).toEqual({ peer: '127.0.0.1' });
});

it('says nothing when the proxy is trusted', async () => {
  t = await httpTest({ config: { trustProxy: '127.0.0.1' } });
  const warn = vi.spyOn(t.core.logger, 'warn');
  expect(await anonymous('127.0.0.9')).toBe(200);
  expect(warn.mock.calls.filter(([, message]) => String(message).includes('does not trust'))).toHaveLength(0);
});
