import { afterEach, describe, expect, test } from 'vitest';
import { IdempotencyKey } from '../../src/core/services/idempotency.js';
import { sha256Hex } from '../../src/core/services/support/ids.js';
import { makeScan } from '../support/store.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, anon, command, expectAppError, freshJpeg } from './helpers.js';

let t: TestCore;
afterEach(() => t.cleanup());

const usage = () => t.core.store.usage.usage('ip:203.0.113.7', 'day:2026-11-21');

describe('Idempotency-Key on analyze', () => {
  test('a retry replays the stored response and is charged once', async () => {
    t = await testCore();
    const image = await freshJpeg();
    const first = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('pos-order-17') }));
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('pos-order-17') }));
    expect(retry.status).toBe(first.status);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers).toEqual({ ...first.headers, 'Idempotent-Replayed': 'true' });
    expect(first.headers).not.toHaveProperty('Idempotent-Replayed');
    expect(t.analyzer.calls).toBe(1);
    expect(await usage()).toEqual({ used: 1, held: 0 });
  });

  test('a replay is served even after the allowance is used up', async () => {
    t = await testCore();
    await t.core.services.scans.analyze(await command(anon()));
    await t.core.services.scans.analyze(await command(anon()));
    const image = await freshJpeg();
    const third = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('k3') }));
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('k3') }));
    expect(retry.body.data.scanId).toBe(third.body.data.scanId);
  });

  test('the verbose extras are part of the replayed response', async () => {
    t = await testCore();
    const image = await freshJpeg();
    await t.core.services.scans.analyze(await command(anon(), { image, verbose: true, idempotencyKey: IdempotencyKey.parse('v') }));
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, verbose: true, idempotencyKey: IdempotencyKey.parse('v') }));
    expect(retry.body.data.result.overlays).toHaveProperty('depthHeatmap');
  });

  test('the same key with a different image is refused', async () => {
    t = await testCore();
    await t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('same') }));
    const error = await expectAppError(
      t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('same') })),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(error.headers['X-RateLimit-Remaining']).toBe('2');
    expect(await usage()).toEqual({ used: 1, held: 0 });
  });

  test('a retry while the first is still running gets CONFLICT with Retry-After: 1', async () => {
    t = await testCore();
    const image = await freshJpeg();
    const release = t.analyzer.hold();
    const first = t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('slow') }));
    await t.analyzer.started(1);
    const conflict = await expectAppError(
      t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('slow') })),
      'CONFLICT',
    );
    expect(conflict.headers['Retry-After']).toBe('1');
    release();
    await expect(first).resolves.toMatchObject({ status: 200 });
    expect(await usage()).toEqual({ used: 1, held: 0 });
  });

  test('a failed first attempt is forgotten: the retry runs afresh', async () => {
    t = await testCore();
    const image = await freshJpeg();
    t.analyzer.fail();
    await expectAppError(t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('r') })), 'NO_TIRE_DETECTED');
    t.analyzer.succeed();
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('r') }));
    expect(retry.headers).not.toHaveProperty('Idempotent-Replayed');
    expect(await usage()).toEqual({ used: 1, held: 0 });
  });

  test('a first attempt refused as TREAD_NOT_VISIBLE is forgotten too, and charged nothing', async () => {
    t = await testCore();
    const image = await freshJpeg();
    t.analyzer.setScene('tread_not_visible');
    await expectAppError(t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('t') })), 'TREAD_NOT_VISIBLE');
    expect(await usage()).toEqual({ used: 0, held: 0 });
    t.analyzer.setScene('tread');
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('t') }));
    expect(retry.headers).not.toHaveProperty('Idempotent-Replayed');
    expect(await usage()).toEqual({ used: 1, held: 0 });
  });

  test('a claim left in flight by a crash is taken over after 10 minutes', async () => {
    t = await testCore();
    const createdAt = t.clock.now();
    await t.core.store.idempotency.begin({ callerKey: 'ip:203.0.113.7', key: 'crashed', requestHash: 'x', createdAt }, new Date(0));
    await expectAppError(t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('crashed') })), 'IDEMPOTENCY_KEY_REUSED');
    t.clock.advance(10 * 60_000 + 1000);
    const res = await t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('crashed') }));
    expect(res.status).toBe(200);
  });

  test('keys are per caller and last 24 hours', async () => {
    t = await testCore();
    const image = await freshJpeg();
    const mine = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('shared') }));
    const theirs = await t.core.services.scans.analyze(await command(anon('198.51.100.9'), { image, idempotencyKey: IdempotencyKey.parse('shared') }));
    expect(theirs.body.data.scanId).not.toBe(mine.body.data.scanId);

    t.clock.advance(24 * 3600 * 1000 + 1000);
    const later = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('shared') }));
    expect(later.body.data.scanId).not.toBe(mine.body.data.scanId);
    expect(later.headers).not.toHaveProperty('Idempotent-Replayed');
  });

  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'order 17'],
    ['non-ASCII', 'bestellung-ü'],
  ])('a key with %s is a validation error', async (_what, key) => {
    await expectAppError(
      Promise.resolve().then(() => IdempotencyKey.parse(key)),
      'VALIDATION_ERROR',
    );
  });

  test("a replay reports the caller's allowance as it is now, not as it was stored", async () => {
    t = await testCore();
    const image = await freshJpeg();
    const first = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('ro-4711-FL') }));
    expect(first.headers['X-RateLimit-Remaining']).toBe('2');
    await t.core.services.scans.analyze(await command(anon()));
    await t.core.services.scans.analyze(await command(anon()));
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('ro-4711-FL') }));
    expect(retry.body).toEqual(first.body);
    expect(retry.headers).toEqual({
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': first.headers['X-RateLimit-Reset'],
      'Idempotent-Replayed': 'true',
    });
    await expectAppError(t.core.services.scans.analyze(await command(anon())), 'RATE_LIMIT_EXCEEDED');
    expect(await usage()).toEqual({ used: 3, held: 0 });
  });

  test('a replay after a pack was redeemed counts the new credit', async () => {
    t = await testCore();
    const caller = await accountCaller(t.core.services);
    const image = await freshJpeg();
    const first = await t.core.services.scans.analyze(await command(caller, { image, idempotencyKey: IdempotencyKey.parse('k') }));
    expect(first.headers['X-RateLimit-Remaining']).toBe('9');
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pack' }));
    const retry = await t.core.services.scans.analyze(await command(caller, { image, idempotencyKey: IdempotencyKey.parse('k') }));
    expect(retry.headers).toMatchObject({ 'X-RateLimit-Remaining': '109', 'Idempotent-Replayed': 'true' });
  });

  test.each([
    ['vehicle', { vehicle: 'ZZ-999' }, /\bvehicle\b/],
    ['vehicle (none at first)', { vehicle: null, other: { vehicle: 'AB-123' } }, /\bvehicle\b/],
    ['position', { position: 'RR' as const }, /\bposition\b/],
    ['verbose', { verbose: true }, /\bverbose\b/],
  ])('the same key and image with a different %s is IDEMPOTENCY_KEY_REUSED naming it', async (_what, change, named) => {
    t = await testCore();
    const image = await freshJpeg();
    const { other, ...retryFields } = { other: {}, ...change } as Record<string, unknown> & { other: Record<string, unknown> };
    const base = { image, idempotencyKey: IdempotencyKey.parse('ro-4711-FL'), vehicle: 'AB-123', position: 'FL' as const, verbose: false };
    const first = await t.core.services.scans.analyze(await command(anon(), { ...base, ...other }));
    const error = await expectAppError(t.core.services.scans.analyze(await command(anon(), { ...base, ...other, ...retryFields })), 'IDEMPOTENCY_KEY_REUSED');
    expect(error.message).toMatch(named);
    expect(error.message).not.toMatch(/\bimage\b/);
    expect(error.message).toMatch(/new key/);
    expect(t.analyzer.calls).toBe(1);
    expect(await usage()).toEqual({ used: 1, held: 0 });
    // The stored answer is untouched: the original retry still replays it.
    const replay = await t.core.services.scans.analyze(await command(anon(), { ...base, ...other }));
    expect(replay.body).toEqual(first.body);
  });

  test('a refusal names every field that differs, image included', async () => {
    t = await testCore();
    await t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('same'), vehicle: 'AB-123', position: 'FL' }));
    const error = await expectAppError(
      t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('same'), vehicle: 'AB-123', position: 'FR', verbose: true })),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(error.message).toMatch(/different image, position and verbose/);
    expect(error.message).not.toMatch(/vehicle/);
  });

  test('fields compare as the scan stores them: surrounding spaces in the vehicle are no difference', async () => {
    t = await testCore();
    const image = await freshJpeg();
    const first = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('k'), vehicle: 'AB-123' }));
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('k'), vehicle: '  AB-123 ' }));
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['Idempotent-Replayed']).toBe('true');
  });

  test('a response stored before fingerprints covered the form fields (image hash only) still replays', async () => {
    t = await testCore();
    const image = await freshJpeg();
    const callerKey = 'ip:203.0.113.7';
    await t.core.store.idempotency.begin({ callerKey, key: 'old', requestHash: sha256Hex(image), createdAt: t.clock.now() }, new Date(0));
    const scan = makeScan({ id: 'stored-before' });
    const body = { success: true, data: { scanId: scan.id, result: scan.result } };
    const response = { status: 200, body, headers: { 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': '1' } };
    await t.core.store.scans.commit({ scan, reservation: null, idempotency: { callerKey, key: 'old', response } });
    const retry = await t.core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('old'), vehicle: 'AB-123' }));
    expect(retry.body).toEqual(body);
    expect(retry.headers).toMatchObject({ 'X-RateLimit-Remaining': '3', 'Idempotent-Replayed': 'true' });
    await expectAppError(t.core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('old') })), 'IDEMPOTENCY_KEY_REUSED');
  });
});
