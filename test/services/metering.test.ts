import { afterEach, describe, expect, test } from 'vitest';
import type { ImageStore } from '../../src/core/storage/images.js';
import { createFileImageStore } from '../../src/core/storage/files.js';
import type { Caller } from '../../src/core/types.js';
import { makePng } from '../fixtures/images/make.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, anon, command, expectAppError } from './helpers.js';

let t: TestCore;
afterEach(() => t.cleanup());

const epoch = (iso: string) => String(Date.parse(iso) / 1000);

async function scan(caller: Caller) {
  return t.core.services.scans.analyze(await command(caller));
}

async function reauth(caller: Caller & { kind: 'account' }) {
  const account = await t.core.store.accounts.findById(caller.account.id);
  return { ...caller, account: account! };
}

describe('anonymous: 3 per client IP per UTC day', () => {
  test('counts down, refuses the 4th with Retry-After to midnight, and resets at 00:00 UTC', async () => {
    t = await testCore();
    t.clock.set('2026-11-21T18:00:00Z');
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await scan(anon());
      expect(res.headers['X-RateLimit-Limit']).toBe('3');
      expect(res.headers['X-RateLimit-Reset']).toBe(epoch('2026-11-22T00:00:00Z'));
      remaining.push(res.headers['X-RateLimit-Remaining']!);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await expectAppError(scan(anon()), 'RATE_LIMIT_EXCEEDED');
    expect(refused.message).toContain('Daily scan limit of 3 reached for anonymous use');
    expect(refused.headers).toMatchObject({
      'Retry-After': String(6 * 3600),
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': epoch('2026-11-22T00:00:00Z'),
    });

    // Retry-After is whole seconds rounded up, never 0: a POS waiting it never retries early
    t.clock.set('2026-11-21T23:59:59.400Z');
    expect((await expectAppError(scan(anon()), 'RATE_LIMIT_EXCEEDED')).headers['Retry-After']).toBe('1');
    t.clock.set('2026-11-21T23:59:57.001Z');
    expect((await expectAppError(scan(anon()), 'RATE_LIMIT_EXCEEDED')).headers['Retry-After']).toBe('3');
    t.clock.set('2026-11-21T18:00:00Z');

    await expect(scan(anon('198.51.100.1'))).resolves.toMatchObject({ status: 200 });

    t.clock.set('2026-11-21T23:59:59Z');
    await expectAppError(scan(anon()), 'RATE_LIMIT_EXCEEDED');
    t.clock.set('2026-11-22T00:00:00Z');
    const next = await scan(anon());
    expect(next.headers['X-RateLimit-Remaining']).toBe('2');
    expect(next.headers['X-RateLimit-Reset']).toBe(epoch('2026-11-23T00:00:00Z'));
  });
});

describe('free account: 10 per UTC calendar month, web and keys together', () => {
  test('session and API key share the allowance; the 11th is refused until the 1st', async () => {
    t = await testCore();
    t.clock.set('2026-11-30T20:00:00Z');
    const session = await accountCaller(t.core.services);
    const { key } = await t.core.services.apiKeys.create(session.account.id, 'POS');
    const viaKey = await t.core.services.auth.authenticateKey(key, '127.0.0.1');
    for (let i = 0; i < 10; i++) {
      const res = await scan(i % 2 ? viaKey : session);
      expect(res.headers['X-RateLimit-Limit']).toBe('10');
      expect(res.headers['X-RateLimit-Remaining']).toBe(String(9 - i));
      expect(res.headers['X-RateLimit-Reset']).toBe(epoch('2026-12-01T00:00:00Z'));
    }
    const refused = await expectAppError(scan(viaKey), 'RATE_LIMIT_EXCEEDED');
    expect(refused.message).toContain('Monthly scan limit of 10 reached for the free plan');
    expect(refused.headers['Retry-After']).toBe(String(4 * 3600));

    t.clock.set('2026-12-01T00:00:00Z');
    const res = await scan(session);
    expect(res.headers['X-RateLimit-Remaining']).toBe('9');
    expect(res.headers['X-RateLimit-Reset']).toBe(epoch('2027-01-01T00:00:00Z'));
  });
});

describe('scan packs', () => {
  test('are spent only after the month’s free 10, and never expire', async () => {
    t = await testCore();
    const caller = await accountCaller(t.core.services);
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pack' }));
    const first = await scan(caller);
    expect(first.headers['X-RateLimit-Remaining']).toBe(String(9 + 100));
    // Limit counts the pack credit left too: Remaining never exceeds it, Limit − Remaining = free used
    expect(first.headers['X-RateLimit-Limit']).toBe(String(10 + 100));
    for (let i = 0; i < 9; i++) await scan(caller);
    expect((await t.core.store.accounts.findById(caller.account.id))!.packCredit).toBe(100);

    const fromPack = await scan(caller);
    expect(fromPack.headers['X-RateLimit-Remaining']).toBe('99');
    expect(fromPack.headers['X-RateLimit-Limit']).toBe(String(10 + 99));
    expect((await t.core.store.accounts.findById(caller.account.id))!.packCredit).toBe(99);

    // Next month the free allowance comes first again; two years on the credit is still there.
    t.clock.set('2026-12-05T09:00:00Z');
    expect((await scan(caller)).headers['X-RateLimit-Remaining']).toBe(String(9 + 99));
    t.clock.set('2028-12-05T09:00:00Z');
    const summary = await t.core.services.accounts.summary(caller.account.id);
    expect(summary).toMatchObject({ plan: 'free', packCredit: 99, allowance: { limit: 10, used: 0, remaining: 10 } });
  });

  test("X-RateLimit-Remaining counts every pack scan in flight, not only the caller's own", async () => {
    t = await testCore({ config: { analysisConcurrency: 1 } });
    const caller = await accountCaller(t.core.services);
    for (let i = 0; i < 10; i++) await scan(caller);
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pack', scans: 3 }));
    const release = t.analyzer.hold();
    const running = await Promise.all([command(caller), command(caller), command(caller)]).then((commands) =>
      commands.map((c) => t.core.services.scans.analyze(c)),
    );
    // All three hold a pack scan (one analysing, two queued) before any finishes.
    await t.analyzer.started(11);
    await expect.poll(() => t.core.store.usage.packBalance(caller.account.id)).toEqual({ credit: 3, held: 3 });
    expect(await t.core.services.scans.rateLimit(caller)).toMatchObject({ remaining: 0 });
    release();
    const remaining = (await Promise.all(running)).map((res) => res.headers['X-RateLimit-Remaining']);
    expect(remaining).toEqual(['0', '0', '0']);
    expect(await t.core.store.usage.packBalance(caller.account.id)).toEqual({ credit: 0, held: 0 });
    await expectAppError(scan(caller), 'RATE_LIMIT_EXCEEDED');
  });

  test('an exhausted pack leaves the caller at 429', async () => {
    t = await testCore();
    const caller = await accountCaller(t.core.services);
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pack', scans: 1 }));
    for (let i = 0; i < 11; i++) await scan(caller);
    await expectAppError(scan(caller), 'RATE_LIMIT_EXCEEDED');
  });
});

describe('pro', () => {
  test('is unlimited while unexpired, then the account is metered as free again', async () => {
    t = await testCore();
    t.clock.set('2026-11-10T12:00:00Z');
    let caller = await accountCaller(t.core.services);
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pro', expiresAt: '2026-11-12T00:00:00Z' }));
    caller = await reauth(caller);
    for (let i = 0; i < 12; i++) {
      const res = await scan(caller);
      expect(res.headers['X-RateLimit-Limit']).toBe('unlimited');
      expect(res.headers['X-RateLimit-Remaining']).toBe('unlimited');
      expect(res.headers['X-RateLimit-Reset']).toBe(epoch('2026-12-01T00:00:00Z'));
    }
    expect((await t.core.services.accounts.summary(caller.account.id)).plan).toBe('pro');

    t.clock.set('2026-11-12T00:00:00Z');
    expect((await t.core.services.accounts.summary(caller.account.id)).plan).toBe('free');
    // Scans made this month count against the free allowance, whichever plan made them.
    const refused = await expectAppError(scan(caller), 'RATE_LIMIT_EXCEEDED');
    expect(refused.headers['X-RateLimit-Limit']).toBe('10');
    t.clock.set('2026-12-01T00:00:00Z');
    expect((await scan(caller)).headers['X-RateLimit-Remaining']).toBe('9');
  });
});

describe('the refusal known before an upload (POST /analyze answers it before reading the photo)', () => {
  test('only when nothing is left even if every analysis in flight fails; never for pro', async () => {
    t = await testCore();
    const caller = await accountCaller(t.core.services);
    for (let i = 0; i < 9; i++) await scan(caller);
    expect(await t.core.services.scans.refusalBeforeUpload(caller)).toBeNull();

    // The tenth is in flight: nothing can be reserved now, but it may fail and give its scan back.
    const release = t.analyzer.hold();
    t.analyzer.fail();
    const tenth = t.core.services.scans.analyze(await command(caller));
    await t.analyzer.started(10);
    expect(await t.core.services.scans.rateLimit(caller)).toMatchObject({ remaining: 0 });
    expect(await t.core.services.scans.refusalBeforeUpload(caller)).toBeNull();
    release();
    await expectAppError(tenth, 'NO_TIRE_DETECTED');
    t.analyzer.succeed();

    await scan(caller);
    const refusal = await t.core.services.scans.refusalBeforeUpload(caller);
    expect(refusal).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringMatching(/Monthly scan limit of 10/) });
    // the same answer analyze() gives once it has the photo
    const after = await expectAppError(scan(caller), 'RATE_LIMIT_EXCEEDED');
    expect(refusal!.headers).toEqual(after.headers);
    expect(refusal!.headers).toMatchObject({ 'X-RateLimit-Remaining': '0', 'Retry-After': expect.stringMatching(/^[1-9]\d*$/) });

    // pack credit, even a single scan of it, lets the photo come
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pack', scans: 1 }));
    expect(await t.core.services.scans.refusalBeforeUpload(caller)).toBeNull();
    await scan(caller);
    expect(await t.core.services.scans.refusalBeforeUpload(caller)).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });

    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pro', expiresAt: '2027-01-31T00:00:00Z' }));
    expect(await t.core.services.scans.refusalBeforeUpload(await reauth(caller))).toBeNull();
  });

  test("anonymous: after the day's third scan from the address, until midnight UTC", async () => {
    t = await testCore();
    const caller = anon('198.51.100.7');
    for (let i = 0; i < 3; i++) {
      expect(await t.core.services.scans.refusalBeforeUpload(caller)).toBeNull();
      await scan(caller);
    }
    expect(await t.core.services.scans.refusalBeforeUpload(caller)).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(await t.core.services.scans.refusalBeforeUpload(anon('198.51.100.8'))).toBeNull();
    t.clock.set(new Date(Date.UTC(t.clock.now().getUTCFullYear(), t.clock.now().getUTCMonth(), t.clock.now().getUTCDate() + 1)));
    expect(await t.core.services.scans.refusalBeforeUpload(caller)).toBeNull();
  });
});

describe('charging is exact and only for successes', () => {
  test('20 concurrent analyses against 10 left: exactly 10 succeed', async () => {
    t = await testCore({ config: { analysisQueueLimit: 64 } });
    const caller = await accountCaller(t.core.services);
    const commands = await Promise.all(Array.from({ length: 20 }, () => command(caller)));
    const outcomes = await Promise.allSettled(commands.map((c) => t.core.services.scans.analyze(c)));
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected' && o.reason.code === 'RATE_LIMIT_EXCEEDED');
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(10);
    expect(await t.core.store.usage.usage(`acct:${caller.account.id}`, 'month:2026-11')).toEqual({ used: 10, held: 0 });
  });

  test('8 concurrent anonymous analyses from one IP: exactly 3 succeed', async () => {
    t = await testCore();
    const commands = await Promise.all(Array.from({ length: 8 }, () => command(anon())));
    const outcomes = await Promise.allSettled(commands.map((c) => t.core.services.scans.analyze(c)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
  });

  test('a failed analysis costs nothing and still reports the allowance', async () => {
    t = await testCore();
    t.analyzer.fail();
    const failed = await expectAppError(scan(anon()), 'NO_TIRE_DETECTED');
    expect(failed.headers).toMatchObject({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '3' });
    t.analyzer.succeed();
    // a tire whose tread cannot be read is refused as freely (issue 42)
    t.analyzer.setScene('tread_not_visible');
    const unreadable = await expectAppError(scan(anon()), 'TREAD_NOT_VISIBLE');
    expect(unreadable.headers).toMatchObject({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '3' });
    t.analyzer.setScene('tread');
    t.analyzer.fail();
    await expectAppError(t.core.services.scans.analyze(await command(anon(), { image: Buffer.from('GIF89a not really') })), 'UNSUPPORTED_MEDIA_TYPE');
    await expectAppError(t.core.services.scans.analyze(await command(anon(), { image: await makePng({ width: 100, height: 100 }) })), 'IMAGE_TOO_SMALL');
    t.analyzer.succeed();
    expect((await scan(anon())).headers['X-RateLimit-Remaining']).toBe('2');
  });

  test('a storage failure after analysis releases the hold and removes the files already written', async () => {
    const dir = { images: null as ImageStore | null, puts: [] as string[] };
    const failing: ImageStore = {
      async put(key, data) {
        dir.puts.push(key);
        if (key.includes('.thumb.')) throw new Error('disk full');
        await dir.images!.put(key, data);
      },
      get: (key) => dir.images!.get(key),
      delete: (key) => dir.images!.delete(key),
      exists: (key) => dir.images!.exists(key),
    };
    t = await testCore({ images: failing });
    dir.images = createFileImageStore(t.config.imagesDir);
    await expect(scan(anon())).rejects.toThrow('disk full');
    expect(dir.puts).toHaveLength(2);
    expect(await dir.images.exists(dir.puts[0]!)).toBe(false);
    expect(await t.core.store.usage.usage('ip:203.0.113.7', 'day:2026-11-21')).toEqual({ used: 0, held: 0 });
  });
});

describe('account summary', () => {
  test('shows plan, allowance, reset time, pack credit and licenses', async () => {
    t = await testCore();
    const caller = await accountCaller(t.core.services);
    await scan(caller);
    await t.core.services.licenses.redeem(caller.account.id, t.issueCode({ kind: 'pack', id: 'pack-1' }));
    const summary = await t.core.services.accounts.summary(caller.account.id);
    expect(summary).toMatchObject({
      plan: 'free',
      proExpiresAt: null,
      allowance: { limit: 10, used: 1, remaining: 9, resetAt: new Date('2026-12-01T00:00:00Z') },
      packCredit: 100,
      licenses: [{ codeId: 'pack-1', kind: 'pack', scans: 100 }],
    });
    expect(await t.core.services.scans.rateLimit(caller)).toEqual({
      limit: 110,
      remaining: 109,
      resetAt: new Date('2026-12-01T00:00:00Z'),
    });
  });
});
