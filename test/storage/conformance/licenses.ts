import { describe, expect, it } from 'vitest';
import type { RedeemedLicense } from '../../../src/core/types.js';
import { makeScan } from '../../support/store.js';
import { type GetStore, NOW, concurrently, createAccount } from './fixtures.js';

const pack = (accountId: string, codeId: string, scans = 100): RedeemedLicense => ({
  codeId,
  accountId,
  kind: 'pack',
  scans,
  expiresAt: null,
  redeemedAt: NOW,
});

const pro = (accountId: string, codeId: string, expiresAt: string): RedeemedLicense => ({
  codeId,
  accountId,
  kind: 'pro',
  scans: null,
  expiresAt: new Date(expiresAt),
  redeemedAt: NOW,
});

export function licenseConformance(store: GetStore): void {
  describe('licenses', () => {
    it('credits a pack once; a second redemption is LICENSE_ALREADY_REDEEMED', async () => {
      const account = await createAccount(store());
      const other = await createAccount(store());
      expect((await store().licenses.redeem(pack(account.id, 'code-1'))).packCredit).toBe(100);
      await expect(store().licenses.redeem(pack(account.id, 'code-1'))).rejects.toMatchObject({
        code: 'LICENSE_ALREADY_REDEEMED',
      });
      await expect(store().licenses.redeem(pack(other.id, 'code-1'))).rejects.toMatchObject({
        code: 'LICENSE_ALREADY_REDEEMED',
      });
      expect((await store().accounts.findById(account.id))?.packCredit).toBe(100);
      expect((await store().accounts.findById(other.id))?.packCredit).toBe(0);
      expect((await store().licenses.redeem(pack(account.id, 'code-2', 50))).packCredit).toBe(150);
    });

    it('concurrent redemptions of one code credit once', async () => {
      const account = await createAccount(store());
      const results = await concurrently(10, () =>
        store()
          .licenses.redeem(pack(account.id, 'race-code'))
          .then(
            () => 'ok',
            (error: { code?: string }) => error.code,
          ),
      );
      expect(results.filter((r) => r === 'ok')).toHaveLength(1);
      expect(results.filter((r) => r === 'LICENSE_ALREADY_REDEEMED')).toHaveLength(9);
      expect((await store().accounts.findById(account.id))?.packCredit).toBe(100);
      expect(await store().licenses.listForAccount(account.id)).toHaveLength(1);
    });

    it('extends pro to a later expiry; one ending no later is refused and stores nothing (the code stays unused)', async () => {
      const account = await createAccount(store());
      const later = await store().licenses.redeem(pro(account.id, 'pro-1', '2027-06-01T00:00:00.000Z'));
      expect(later.proExpiresAt).toEqual(new Date('2027-06-01T00:00:00.000Z'));
      for (const [id, end] of [
        ['pro-2', '2027-01-01T00:00:00.000Z'],
        ['pro-2b', '2027-06-01T00:00:00.000Z'],
      ] as const) {
        await expect(store().licenses.redeem(pro(account.id, id, end))).rejects.toMatchObject({ code: 'CONFLICT' });
      }
      expect((await store().licenses.listForAccount(account.id)).map((l) => l.codeId)).toEqual(['pro-1']);
      const other = await createAccount(store());
      expect((await store().licenses.redeem(pro(other.id, 'pro-2', '2027-01-01T00:00:00.000Z'))).proExpiresAt).toEqual(new Date('2027-01-01T00:00:00.000Z'));
      // a code already redeemed is that, before anything else
      await expect(store().licenses.redeem(pro(account.id, 'pro-1', '2027-06-01T00:00:00.000Z'))).rejects.toMatchObject({ code: 'LICENSE_ALREADY_REDEEMED' });
      const further = await store().licenses.redeem(pro(account.id, 'pro-3', '2028-01-01T00:00:00.000Z'));
      expect(further).toMatchObject({ proExpiresAt: new Date('2028-01-01T00:00:00.000Z'), packCredit: 0 });
    });

    it('lists an account’s redemptions exactly, oldest first', async () => {
      const account = await createAccount(store());
      const first = pro(account.id, 'l-1', '2027-01-01T00:00:00.000Z');
      const second = { ...pack(account.id, 'l-2', 100), redeemedAt: new Date(NOW.getTime() + 1) };
      await store().licenses.redeem(second);
      await store().licenses.redeem(first);
      expect(await store().licenses.listForAccount(account.id)).toEqual([first, second]);
      expect(await store().licenses.listForAccount('nobody')).toEqual([]);
    });

    it('refuses a redemption for an unknown account and keeps the code redeemable', async () => {
      await expect(store().licenses.redeem(pack('ghost', 'code-x'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const account = await createAccount(store());
      expect((await store().licenses.redeem(pack(account.id, 'code-x'))).packCredit).toBe(100);
    });
  });

  describe('idempotency', () => {
    const claim = { callerKey: 'acct:i', key: 'k', requestHash: 'h1', createdAt: NOW };
    const day = 24 * 3_600_000;
    const cutoff = new Date(NOW.getTime() - day);

    it('claims a key once; others see the in-flight record', async () => {
      expect(await store().idempotency.begin(claim, cutoff)).toEqual({ claimed: true });
      expect(await store().idempotency.begin({ ...claim, requestHash: 'h2' }, cutoff)).toEqual({
        claimed: false,
        existing: { ...claim, response: null },
      });
      expect(await store().idempotency.begin({ ...claim, callerKey: 'acct:j' }, cutoff)).toEqual({ claimed: true });
    });

    it('abandon frees an in-flight claim but never a completed one', async () => {
      await store().idempotency.begin(claim, cutoff);
      await store().idempotency.abandon(claim.callerKey, claim.key);
      expect(await store().idempotency.begin(claim, cutoff)).toEqual({ claimed: true });
      const response = { status: 200, body: { ok: 1 }, headers: {} };
      await store().scans.commit({
        scan: makeScan(),
        reservation: null,
        idempotency: { callerKey: claim.callerKey, key: claim.key, response },
      });
      await store().idempotency.abandon(claim.callerKey, claim.key);
      expect(await store().idempotency.begin(claim, cutoff)).toMatchObject({ claimed: false, existing: { response } });
    });

    it('abandonInFlight frees every in-flight claim made before the time given, never a completed or a later one', async () => {
      const response = { status: 200, body: { ok: 1 }, headers: {} };
      await store().idempotency.begin({ ...claim, key: 'done' }, cutoff);
      await store().scans.commit({ scan: makeScan(), reservation: null, idempotency: { callerKey: claim.callerKey, key: 'done', response } });
      await store().idempotency.begin({ ...claim, key: 'a' }, cutoff);
      await store().idempotency.begin({ ...claim, key: 'b', callerKey: 'ip:203.0.113.0' }, cutoff);
      const later = { ...claim, key: 'later', createdAt: new Date(NOW.getTime() + 1000) };
      await store().idempotency.begin(later, cutoff);

      expect(await store().idempotency.abandonInFlight(new Date(NOW.getTime() + 1))).toBe(2);
      expect(await store().idempotency.begin({ ...claim, key: 'a' }, cutoff)).toEqual({ claimed: true });
      expect(await store().idempotency.begin({ ...claim, key: 'b', callerKey: 'ip:203.0.113.0' }, cutoff)).toEqual({ claimed: true });
      expect(await store().idempotency.begin({ ...claim, key: 'done' }, cutoff)).toMatchObject({ claimed: false, existing: { response } });
      expect(await store().idempotency.begin(later, cutoff)).toMatchObject({ claimed: false, existing: { response: null } });
    });

    it('treats records older than the cutoff as absent and deletes them on request', async () => {
      const old = { ...claim, createdAt: new Date(NOW.getTime() - 2 * day) };
      await store().idempotency.begin(old, new Date(0));
      expect(await store().idempotency.begin(claim, cutoff)).toEqual({ claimed: true });
      expect(await store().idempotency.begin({ ...claim, requestHash: 'x' }, cutoff)).toMatchObject({
        existing: { requestHash: 'h1', createdAt: NOW },
      });
      await store().idempotency.begin({ ...old, key: 'old-2' }, new Date(0));
      expect(await store().idempotency.deleteExpired(cutoff)).toBe(1);
      expect(await store().idempotency.begin({ ...old, key: 'old-2' }, new Date(0))).toEqual({ claimed: true });
    });
  });

  describe('meta and health', () => {
    it('stores and overwrites values', async () => {
      expect(await store().meta.get('sync.cursor')).toBeNull();
      await store().meta.set('sync.cursor', '41');
      await store().meta.set('sync.cursor', '42');
      expect(await store().meta.get('sync.cursor')).toBe('42');
    });

    it('answers ping', async () => {
      await expect(store().ping()).resolves.toBeUndefined();
    });

    it('knows when the database was created (its first migration), not after now', async () => {
      const created = await store().createdAt();
      expect(created).toBeInstanceOf(Date);
      expect(created!.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
      expect(created!.getTime()).toBeGreaterThan(Date.UTC(2020, 0, 1));
    });
  });
}
