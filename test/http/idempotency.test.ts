/** Idempotency-Key over HTTP: what a POS retry gets back (audit L1, L2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let shade = 40;
beforeAll(async () => {
  t = await httpTest();
});
afterAll(() => t.cleanup());

const photo = () => makeJpeg({ width: 320, height: 256, shade: (shade += 9) });

async function analyze(key: string, image: Buffer, fields: Record<string, string>, idempotencyKey?: string) {
  const upload = imageForm(image, fields);
  const headers: Record<string, string> = { ...upload.headers, 'x-api-key': key };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  return t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers });
}

describe('a replay', () => {
  it('carries the X-RateLimit-* figures of now: 0 left once the month is used up, not the stored 9', async () => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const image = await photo();
    const first = await analyze(key, image, { vehicle: 'AB-123', position: 'FL' }, 'ro-4711-FL');
    expect(first.headers['x-ratelimit-remaining']).toBe('9');
    for (let i = 0; i < 9; i++) expect((await analyze(key, await photo(), {})).statusCode).toBe(200);
    expectError(await analyze(key, await photo(), {}), 429, 'RATE_LIMIT_EXCEEDED');

    const replay = await analyze(key, image, { vehicle: 'AB-123', position: 'fl' }, 'ro-4711-FL');
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual(first.json());
    expect(replay.headers).toMatchObject({
      'idempotent-replayed': 'true',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': first.headers['x-ratelimit-reset'],
    });
  });
});

describe('a replay of a scan deleted since', () => {
  it('is 409 CONFLICT naming the deleted scan, not a 200 with a dead scanId, and charges nothing', async () => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const image = await photo();
    const first = await analyze(key, image, { vehicle: 'AB-123' }, 'ro-4712-FL');
    const { scanId } = first.json().data;
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${scanId}`, headers: { 'x-api-key': key } })).statusCode).toBe(200);

    const retry = await analyze(key, image, { vehicle: 'AB-123' }, 'ro-4712-FL');
    const message = expectError(retry, 409, 'CONFLICT');
    expect(message).toContain(scanId);
    expect(message).toMatch(/deleted since.*new Idempotency-Key/);
    const account = (await t.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': key } })).json().data;
    expect(account.allowance.used).toBe(1);
    // a new key analyses the photo again, as the message says
    expect((await analyze(key, image, { vehicle: 'AB-123' }, 'ro-4712-FL-2')).statusCode).toBe(200);
  });
});

describe('the same key with another request', () => {
  it.each([
    ['vehicle', { vehicle: 'ZZ-999', position: 'FL' }, 'vehicle'],
    ['position', { vehicle: 'AB-123', position: 'RR' }, 'position'],
    ['verbose', { vehicle: 'AB-123', position: 'FL', verbose: '1' }, 'verbose'],
    ['vehicle, position and verbose', { vehicle: 'ZZ-999', position: 'RR', verbose: '1' }, 'vehicle, position and verbose'],
  ])('differing in %s is 422 IDEMPOTENCY_KEY_REUSED naming it, and the stored answer stays', async (_what, fields, named) => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    const image = await photo();
    const first = await analyze(key, image, { vehicle: 'AB-123', position: 'FL' }, 'ro-4711-FL');
    expect(first.statusCode).toBe(200);

    const reused = await analyze(key, image, fields, 'ro-4711-FL');
    const message = expectError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(message).toContain(`with a different ${named};`);
    expect(reused.headers['x-ratelimit-remaining']).toBe('9');

    const history = (await t.app.inject({ url: '/api/v1/scans', headers: { 'x-api-key': key } })).json().data.items;
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ vehicle: 'AB-123', position: 'FL' });
    const retry = await analyze(key, image, { vehicle: ' AB-123', position: 'FL', verbose: '0' }, 'ro-4711-FL');
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(first.json());
  });
});
