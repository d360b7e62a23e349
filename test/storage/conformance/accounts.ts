import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../../src/core/types.js';
import { type GetStore, NOW, createAccount, uid } from './fixtures.js';

export function accountConformance(store: GetStore): void {
  describe('accounts', () => {
    it('creates the first account only while there is none, two at once giving one (registration "first")', async () => {
      const input = (n: number) => ({ id: `first-${n}`, email: `first${n}@example.com`, passwordHash: 'scrypt$x', createdAt: NOW });
      const made = await Promise.all([1, 2, 3, 4].map((n) => store().accounts.createFirst(input(n))));
      expect(made.filter((account) => account !== null)).toHaveLength(1);
      expect(await store().accounts.createFirst(input(5))).toBeNull();
      expect(await store().accounts.findByEmail('first5@example.com')).toBeNull();
    });

    it('creates an account with the email case-folded and finds it by any case', async () => {
      const created = await store().accounts.create({
        id: 'acct-1',
        email: 'Shop.Owner@Example.COM',
        passwordHash: 'scrypt$abc',
        createdAt: new Date('2026-11-21T08:30:15.123Z'),
      });
      expect(created).toEqual({
        id: 'acct-1',
        email: 'shop.owner@example.com',
        createdAt: new Date('2026-11-21T08:30:15.123Z'),
        proExpiresAt: null,
        packCredit: 0,
      });
      const found = await store().accounts.findByEmail('SHOP.owner@example.com');
      expect(found).toEqual({ ...created, passwordHash: 'scrypt$abc' });
      expect(await store().accounts.findById('acct-1')).toEqual(created);
    });

    it('refuses a second account whose email differs only in case', async () => {
      await createAccount(store(), 'dup@example.com');
      await expect(createAccount(store(), 'DUP@Example.com')).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('answers null for unknown ids and emails', async () => {
      expect(await store().accounts.findById('nope')).toBeNull();
      expect(await store().accounts.findByEmail('nobody@example.com')).toBeNull();
    });
  });

  describe('sessions', () => {
    it('stores, finds and deletes a session', async () => {
      const account = await createAccount(store());
      const session = {
        tokenHash: 'h'.repeat(64),
        accountId: account.id,
        createdAt: NOW,
        expiresAt: new Date(NOW.getTime() + 3_600_000),
      };
      await store().sessions.create(session);
      expect(await store().sessions.find(session.tokenHash)).toEqual(session);
      await store().sessions.delete(session.tokenHash);
      expect(await store().sessions.find(session.tokenHash)).toBeNull();
      await store().sessions.delete(session.tokenHash);
    });

    it('deletes only expired sessions', async () => {
      const account = await createAccount(store());
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      await store().sessions.create({ tokenHash: 'old', accountId: account.id, createdAt: at(-9), expiresAt: at(-1) });
      await store().sessions.create({ tokenHash: 'live', accountId: account.id, createdAt: at(-9), expiresAt: at(1) });
      expect(await store().sessions.deleteExpired(NOW)).toBe(1);
      expect(await store().sessions.find('old')).toBeNull();
      expect(await store().sessions.find('live')).not.toBeNull();
    });
  });

  describe('API keys', () => {
    const key = (accountId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
      id: uid('key'),
      accountId,
      name: 'POS counter 1',
      prefix: 'tw_AbC1',
      hash: uid('hash'),
      createdAt: NOW,
      lastUsedAt: null,
      revokedAt: null,
      ...overrides,
    });

    it('finds a key by hash and lists an account’s keys oldest first', async () => {
      const account = await createAccount(store());
      const other = await createAccount(store());
      const first = key(account.id);
      const second = key(account.id, { createdAt: new Date(NOW.getTime() + 1000), name: 'DMS' });
      await store().apiKeys.create(second);
      await store().apiKeys.create(first);
      await store().apiKeys.create(key(other.id));
      expect(await store().apiKeys.findByHash(first.hash)).toEqual(first);
      expect(await store().apiKeys.findByHash('unknown')).toBeNull();
      expect(await store().apiKeys.listForAccount(account.id)).toEqual([first, second]);
    });

    it('revokes only the owner’s live key, once', async () => {
      const account = await createAccount(store());
      const other = await createAccount(store());
      const record = key(account.id);
      await store().apiKeys.create(record);
      const at = new Date(NOW.getTime() + 5000);
      expect(await store().apiKeys.revoke(other.id, record.id, at)).toBe(false);
      expect(await store().apiKeys.revoke(account.id, record.id, at)).toBe(true);
      expect(await store().apiKeys.revoke(account.id, record.id, at)).toBe(false);
      expect(await store().apiKeys.revoke(account.id, 'missing', at)).toBe(false);
      expect((await store().apiKeys.findByHash(record.hash))?.revokedAt).toEqual(at);
    });

    it('finds an account’s keys by id in one call, revoked ones included, others skipped', async () => {
      const account = await createAccount(store());
      const other = await createAccount(store());
      const live = key(account.id, { name: 'Main St' });
      const revoked = key(account.id, { name: 'Elm Road' });
      const unasked = key(account.id);
      const foreign = key(other.id);
      for (const record of [live, revoked, unasked, foreign]) await store().apiKeys.create(record);
      await store().apiKeys.revoke(account.id, revoked.id, new Date(NOW.getTime() + 5000));
      const found = await store().apiKeys.findByIds(account.id, [live.id, revoked.id, foreign.id, 'missing', live.id]);
      const byId = new Map(found.map((record) => [record.id, record]));
      expect(found).toHaveLength(2);
      expect(byId.get(live.id)).toEqual(live);
      expect(byId.get(revoked.id)).toEqual({ ...revoked, revokedAt: new Date(NOW.getTime() + 5000) });
      expect(await store().apiKeys.findByIds(account.id, [])).toEqual([]);
      expect(await store().apiKeys.findByIds(other.id, [live.id])).toEqual([]);
    });

    it('records the last use', async () => {
      const account = await createAccount(store());
      const record = key(account.id);
      await store().apiKeys.create(record);
      const at = new Date('2026-11-21T13:14:15.678Z');
      await store().apiKeys.touch(record.id, at);
      expect((await store().apiKeys.findByHash(record.hash))?.lastUsedAt).toEqual(at);
    });
  });
}
