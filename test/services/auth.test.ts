import { afterEach, describe, expect, test, vi } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { KEY_TOUCH_INTERVAL_MS } from '../../src/core/services/auth.js';
import { randomBase62, sha256Hex } from '../../src/core/services/support/ids.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, expectAppError } from './helpers.js';

let t: TestCore;
afterEach(() => t.cleanup());

const PASSWORD = 'correct horse battery';
const IP = '192.0.2.10';

describe('register', () => {
  test('folds the email case and stores a self-describing scrypt hash, never the password', async () => {
    t = await testCore();
    const account = await t.core.services.auth.register('  Shop@Example.COM ', PASSWORD, IP);
    expect(account.email).toBe('shop@example.com');
    const stored = await t.core.store.accounts.findByEmail('shop@example.com');
    expect(stored!.passwordHash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(stored!.passwordHash).not.toContain(PASSWORD);
    await expectAppError(t.core.services.auth.register('SHOP@example.com', PASSWORD, IP), 'CONFLICT');
  });

  test.each([
    ['no at sign', 'shop.example.com', PASSWORD],
    ['no domain dot', 'shop@example', PASSWORD],
    ['spaces', 'sh op@example.com', PASSWORD],
    ['a 7-character password', 'a@example.com', '1234567'],
    ['a 1025-character password', 'a@example.com', 'x'.repeat(1025)],
  ])('refuses %s', async (_what, email, password) => {
    t = await testCore();
    await expectAppError(t.core.services.auth.register(email, password, IP), 'VALIDATION_ERROR');
  });

  test('two accounts with the same password get different hashes', async () => {
    t = await testCore();
    await t.core.services.auth.register('a@example.com', PASSWORD, IP);
    await t.core.services.auth.register('b@example.com', PASSWORD, IP);
    const a = await t.core.store.accounts.findByEmail('a@example.com');
    const b = await t.core.store.accounts.findByEmail('b@example.com');
    expect(a!.passwordHash).not.toBe(b!.passwordHash);
  });
});

describe('login and sessions', () => {
  test('a session token is 32 random bytes, stored only as its sha256, valid for 30 days', async () => {
    t = await testCore();
    await t.core.services.auth.register('shop@example.com', PASSWORD, IP);
    const { token, account, expiresAt } = await t.core.services.auth.login('SHOP@example.com', PASSWORD, '127.0.0.1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(account).not.toHaveProperty('passwordHash');
    expect(expiresAt).toEqual(new Date(t.clock.now().getTime() + 30 * 86_400_000));
    expect(await t.core.store.sessions.find(token)).toBeNull();
    expect(await t.core.store.sessions.find(sha256Hex(token))).not.toBeNull();

    const caller = await t.core.services.auth.authenticateSession(token, '10.1.1.1');
    expect(caller).toMatchObject({ kind: 'account', via: 'session', apiKeyId: null, ip: '10.1.1.1' });

    t.clock.advance(30 * 86_400_000 - 1000);
    await t.core.services.auth.authenticateSession(token, '127.0.0.1');
    t.clock.advance(1000);
    await expectAppError(t.core.services.auth.authenticateSession(token, '127.0.0.1'), 'INVALID_SESSION');
  });

  test('logout ends the session; unknown tokens are refused', async () => {
    t = await testCore();
    await t.core.services.auth.register('shop@example.com', PASSWORD, IP);
    const { token } = await t.core.services.auth.login('shop@example.com', PASSWORD, '127.0.0.1');
    await t.core.services.auth.logout(token);
    await expectAppError(t.core.services.auth.authenticateSession(token, '127.0.0.1'), 'INVALID_SESSION');
    await expectAppError(t.core.services.auth.authenticateSession('made-up', '127.0.0.1'), 'INVALID_SESSION');
  });

  test('wrong password and unknown email give the same INVALID_CREDENTIALS', async () => {
    t = await testCore();
    await t.core.services.auth.register('shop@example.com', PASSWORD, IP);
    const wrong = await expectAppError(t.core.services.auth.login('shop@example.com', 'not the password', '1.1.1.1'), 'INVALID_CREDENTIALS');
    const unknown = await expectAppError(t.core.services.auth.login('nobody@example.com', PASSWORD, '1.1.1.1'), 'INVALID_CREDENTIALS');
    expect(wrong.message).toBe(unknown.message);
  });

  test('5 failures per email and IP within 15 minutes lock that pair out, with Retry-After', async () => {
    t = await testCore();
    const auth = t.core.services.auth;
    await auth.register('shop@example.com', PASSWORD, IP);
    for (let i = 0; i < 5; i++) {
      await expectAppError(auth.login('shop@example.com', `guess-${i}-wrong`, '6.6.6.6'), 'INVALID_CREDENTIALS');
      t.clock.advance(60_000);
    }
    const locked = await expectAppError(auth.login('shop@example.com', PASSWORD, '6.6.6.6'), 'TOO_MANY_ATTEMPTS');
    expect(locked.headers['Retry-After']).toBe(String(15 * 60 - 5 * 60));
    // The shop itself, from another address, is not locked out.
    await expect(auth.login('shop@example.com', PASSWORD, '127.0.0.1')).resolves.toHaveProperty('token');

    t.clock.advance(10 * 60_000);
    await expect(auth.login('shop@example.com', PASSWORD, '6.6.6.6')).resolves.toHaveProperty('token');
  });

  test('an IPv6 guesser changing address within its /64 is still one address to the lockout', async () => {
    t = await testCore();
    const auth = t.core.services.auth;
    await auth.register('shop@example.com', PASSWORD, IP);
    for (let i = 0; i < 5; i++) {
      await expectAppError(auth.login('shop@example.com', `guess-${i}-wrong`, `2001:db8:1:2::${(i + 1).toString(16)}`), 'INVALID_CREDENTIALS');
    }
    await expectAppError(auth.login('shop@example.com', PASSWORD, '2001:db8:1:2:ffff::9'), 'TOO_MANY_ATTEMPTS');
    // another /64 is another address
    await expect(auth.login('shop@example.com', PASSWORD, '2001:db8:1:3::1')).resolves.toHaveProperty('token');
  });

  test('a successful login clears earlier failures', async () => {
    t = await testCore();
    const auth = t.core.services.auth;
    await auth.register('shop@example.com', PASSWORD, IP);
    for (let i = 0; i < 4; i++) await expectAppError(auth.login('shop@example.com', 'wrong-password', '6.6.6.6'), 'INVALID_CREDENTIALS');
    await auth.login('shop@example.com', PASSWORD, '6.6.6.6');
    for (let i = 0; i < 4; i++) await expectAppError(auth.login('shop@example.com', 'wrong-password', '6.6.6.6'), 'INVALID_CREDENTIALS');
    await expect(auth.login('shop@example.com', PASSWORD, '6.6.6.6')).resolves.toHaveProperty('token');
  });
});

describe('API keys', () => {
  test('lifecycle: created once with its secret, listed without it, used, revoked', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const { key, record } = await t.core.services.apiKeys.create(owner.account.id, '  Front desk POS ');
    expect(key).toMatch(/^tw_[A-Za-z0-9]{32}$/);
    expect(record).toMatchObject({ name: 'Front desk POS', prefix: key.slice(0, 7), lastUsedAt: null, revokedAt: null });
    expect(record.hash).toBe(sha256Hex(key));

    const listed = await t.core.services.apiKeys.list(owner.account.id);
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(key);

    t.clock.advance(5000);
    const caller = await t.core.services.auth.authenticateKey(key, '192.168.1.20');
    expect(caller).toMatchObject({ kind: 'account', via: 'key', apiKeyId: record.id, ip: '192.168.1.20' });
    const firstUse = t.clock.now();
    expect((await t.core.services.apiKeys.list(owner.account.id))[0]!.lastUsedAt).toEqual(firstUse);
    // written at most once a minute, not on every request
    t.clock.advance(KEY_TOUCH_INTERVAL_MS - 1);
    await t.core.services.auth.authenticateKey(key, '192.168.1.20');
    expect((await t.core.services.apiKeys.list(owner.account.id))[0]!.lastUsedAt).toEqual(firstUse);
    t.clock.advance(1);
    await t.core.services.auth.authenticateKey(key, '192.168.1.20');
    expect((await t.core.services.apiKeys.list(owner.account.id))[0]!.lastUsedAt).toEqual(t.clock.now());
    // a clock set back writes again rather than freezing "last used"
    t.clock.advance(-3_600_000);
    await t.core.services.auth.authenticateKey(key, '192.168.1.20');
    expect((await t.core.services.apiKeys.list(owner.account.id))[0]!.lastUsedAt).toEqual(t.clock.now());
    // a database that cannot take the write (disk full) does not refuse the caller
    t.clock.advance(KEY_TOUCH_INTERVAL_MS);
    const touch = vi.spyOn(t.core.store.apiKeys, 'touch').mockRejectedValueOnce(new AppError('STORAGE_UNAVAILABLE', 'The disk is full'));
    await expect(t.core.services.auth.authenticateKey(key, '192.168.1.20')).resolves.toMatchObject({ via: 'key' });
    expect(touch).toHaveBeenCalledTimes(1);
    touch.mockRestore();

    const stranger = await accountCaller(t.core.services);
    await expectAppError(t.core.services.apiKeys.revoke(stranger.account.id, record.id), 'NOT_FOUND');
    await t.core.services.apiKeys.revoke(owner.account.id, record.id);
    const revoked = await expectAppError(t.core.services.auth.authenticateKey(key, '192.168.1.20'), 'INVALID_API_KEY');
    expect(revoked.message).toMatch(/revoked/);
    await expectAppError(t.core.services.apiKeys.revoke(owner.account.id, record.id), 'NOT_FOUND');
  });

  test('malformed and unknown keys are INVALID_API_KEY with different explanations', async () => {
    t = await testCore();
    for (const bad of ['', 'tw_short', `tw_${'a'.repeat(31)}!`, `TW_${'a'.repeat(32)}`, `tw_${'a'.repeat(33)}`]) {
      const error = await expectAppError(t.core.services.auth.authenticateKey(bad, '127.0.0.1'), 'INVALID_API_KEY');
      expect(error.message).toMatch(/malformed/);
    }
    const unknown = await expectAppError(t.core.services.auth.authenticateKey(`tw_${'a'.repeat(32)}`, '127.0.0.1'), 'INVALID_API_KEY');
    expect(unknown.message).toMatch(/unknown/);
  });

  test.each([
    ['empty', '   '],
    ['65 characters', 'n'.repeat(65)],
    ['a control character', 'POS\u0007'],
  ])('a name that is %s is refused', async (_what, name) => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    await expectAppError(t.core.services.apiKeys.create(owner.account.id, name), 'VALIDATION_ERROR');
  });

  test('key characters are drawn from all 62 symbols', () => {
    const sample = randomBase62(20_000);
    expect(sample).toMatch(/^[A-Za-z0-9]+$/);
    expect(new Set(sample).size).toBe(62);
    // No symbol should be far off its share (20000 / 62 ≈ 323); a modulo bias would skew the first 8.
    const counts = [...new Set(sample)].map((c) => sample.split(c).length - 1);
    expect(Math.min(...counts)).toBeGreaterThan(220);
    expect(Math.max(...counts)).toBeLessThan(430);
  });
});
