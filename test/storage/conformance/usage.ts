import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/storage/store.js';
import { makeScan } from '../../support/store.js';
import { type GetStore, MONTH, NOW, concurrently, createAccount, reserveRequest } from './fixtures.js';

/** Reserve and commit `n` scans, leaving `limit - n` of the allowance. */
async function spend(store: Store, subject: string, n: number, limit = 10): Promise<void> {
  for (let i = 0; i < n; i++) {
    const reservation = await store.usage.reserve(reserveRequest({ subject, limit }));
    expect(reservation?.source).toBe('allowance');
    await store.scans.commit({ scan: makeScan(), reservation, idempotency: null });
  }
}

async function giveCredit(store: Store, accountId: string, scans: number): Promise<void> {
  await store.licenses.redeem({
    codeId: `pack-${accountId}-${scans}`,
    accountId,
    kind: 'pack',
    scans,
    expiresAt: null,
    redeemedAt: NOW,
  });
}

export function usageConformance(store: GetStore): void {
  describe('usage', () => {
    it('grants the allowance up to the limit, counting holds, then refuses', async () => {
      const granted = [];
      for (let i = 0; i < 4; i++) {
        granted.push(await store().usage.reserve(reserveRequest({ subject: 'ip:1.2.3.4', limit: 3 })));
      }
      expect(granted.map((r) => r?.source ?? null)).toEqual(['allowance', 'allowance', 'allowance', null]);
      expect(granted[0]).toMatchObject({ subject: 'ip:1.2.3.4', window: MONTH });
      expect(await store().usage.usage('ip:1.2.3.4', MONTH)).toEqual({ used: 0, held: 3 });
    });

    it('50 concurrent reservations against 7 left grant exactly 7', async () => {
      await spend(store(), 'acct:race', 3);
      const results = await concurrently(50, () => store().usage.reserve(reserveRequest({ subject: 'acct:race' })));
      expect(results.filter((r) => r !== null)).toHaveLength(7);
      expect(new Set(results.filter((r) => r !== null).map((r) => r.id)).size).toBe(7);
      expect(await store().usage.usage('acct:race', MONTH)).toEqual({ used: 3, held: 7 });
    });

    it('keeps windows and subjects apart', async () => {
      await spend(store(), 'acct:w', 2, 2);
      expect(await store().usage.reserve(reserveRequest({ subject: 'acct:w', limit: 2 }))).toBeNull();
      const nextMonth = reserveRequest({ subject: 'acct:w', limit: 2, window: 'month:2026-12' });
      expect(await store().usage.reserve(nextMonth)).not.toBeNull();
      expect(await store().usage.reserve(reserveRequest({ subject: 'acct:other', limit: 2 }))).not.toBeNull();
      expect(await store().usage.usage('acct:none', MONTH)).toEqual({ used: 0, held: 0 });
    });

    it('uses pack credit only once the allowance is spent, and never more than the credit', async () => {
      const account = await createAccount(store());
      const subject = `acct:${account.id}`;
      await giveCredit(store(), account.id, 2);
      const ask = () => store().usage.reserve(reserveRequest({ subject, limit: 1, packAccountId: account.id }));
      expect((await ask())?.source).toBe('allowance');
      const packs = await concurrently(5, ask);
      expect(packs.map((r) => r?.source ?? null).sort()).toEqual([null, null, null, 'pack', 'pack']);
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 0, held: 1 });
    });

    it('does not touch pack credit when the request names no pack account', async () => {
      const account = await createAccount(store());
      await giveCredit(store(), account.id, 5);
      await spend(store(), `acct:${account.id}`, 1, 1);
      expect(await store().usage.reserve(reserveRequest({ subject: `acct:${account.id}`, limit: 1 }))).toBeNull();
    });

    it('always grants unmetered callers and counts their scans as used on commit', async () => {
      const results = await concurrently(5, () => store().usage.reserve(reserveRequest({ subject: 'acct:pro', limit: 1, unmetered: true })));
      expect(results.every((r) => r?.source === 'unmetered')).toBe(true);
      for (const reservation of results) await store().scans.commit({ scan: makeScan(), reservation, idempotency: null });
      expect(await store().usage.usage('acct:pro', MONTH)).toEqual({ used: 5, held: 0 });
    });

    it('counts pro holds against the allowance too (a license that lapses while its scans are analysed)', async () => {
      for (let i = 0; i < 9; i++) await store().usage.reserve(reserveRequest({ subject: 'acct:lapsed', limit: 10, unmetered: true }));
      const free = await concurrently(5, () => store().usage.reserve(reserveRequest({ subject: 'acct:lapsed', limit: 10 })));
      expect(free.filter((r) => r !== null)).toHaveLength(1);
      expect(await store().usage.usage('acct:lapsed', MONTH)).toEqual({ used: 0, held: 10 });
    });

    it('release gives the unit back and is idempotent', async () => {
      const first = await store().usage.reserve(reserveRequest({ subject: 'acct:r', limit: 1 }));
      expect(await store().usage.reserve(reserveRequest({ subject: 'acct:r', limit: 1 }))).toBeNull();
      await store().usage.release(first!.id);
      await store().usage.release(first!.id);
      await store().usage.release('never-existed');
      expect(await store().usage.usage('acct:r', MONTH)).toEqual({ used: 0, held: 0 });
      expect(await store().usage.reserve(reserveRequest({ subject: 'acct:r', limit: 1 }))).not.toBeNull();
    });

    it('packBalance gives the credit and every pack hold of the account, whoever took it', async () => {
      const account = await createAccount(store());
      const other = await createAccount(store());
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 0, held: 0 });
      expect(await store().usage.packBalance('no-such-account')).toEqual({ credit: 0, held: 0 });
      await giveCredit(store(), account.id, 3);
      await giveCredit(store(), other.id, 5);
      const ask = (subject: string) => store().usage.reserve(reserveRequest({ subject, limit: 0, packAccountId: account.id }));
      const first = await ask(`acct:${account.id}`);
      await ask('acct:elsewhere');
      await store().usage.reserve(reserveRequest({ subject: `acct:${account.id}`, limit: 5 }));
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 3, held: 2 });
      expect(await store().usage.packBalance(other.id)).toEqual({ credit: 5, held: 0 });
      await store().scans.commit({ scan: makeScan(), reservation: first, idempotency: null });
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 2, held: 1 });
    });

    it('releasing a pack hold frees the credit again', async () => {
      const account = await createAccount(store());
      await giveCredit(store(), account.id, 1);
      const ask = () => store().usage.reserve(reserveRequest({ subject: 'x', limit: 0, packAccountId: account.id }));
      const held = await ask();
      expect(held?.source).toBe('pack');
      expect(await ask()).toBeNull();
      await store().usage.release(held!.id);
      expect((await ask())?.source).toBe('pack');
    });

    it('a free scan given back goes to the oldest pack hold of that month: packs are spent only after the free scans', async () => {
      const account = await createAccount(store());
      const subject = `acct:${account.id}`;
      await giveCredit(store(), account.id, 3);
      await spend(store(), subject, 1, 2);
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      const ask = (ms: number, window = MONTH) => store().usage.reserve(reserveRequest({ subject, limit: 2, packAccountId: account.id, now: at(ms), window }));
      const free = await ask(-3000); // the month's last free scan, held by a request that will fail
      // asked out of order: it is the time each request began that makes a hold the oldest
      const newer = await ask(-1000);
      const older = await ask(-2000);
      expect([free, older, newer].map((r) => r?.source)).toEqual(['allowance', 'pack', 'pack']);
      const nextMonthFree = await ask(0, 'month:2026-12');
      expect(nextMonthFree?.source).toBe('allowance');

      await store().usage.release(nextMonthFree!.id); // another month's free scan: nothing of this month moves
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 3, held: 2 });
      await store().usage.release(free!.id);
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 3, held: 1 });
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 1, held: 1 });
      // the newer request is still the pack's: its scan spends a unit of credit, not a free scan
      await store().scans.commit({ scan: makeScan(), reservation: newer, idempotency: null });
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 2, held: 0 });
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 1, held: 1 });
      await store().scans.commit({ scan: makeScan(), reservation: older, idempotency: null }); // now a free scan
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 2, held: 0 });
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 2, held: 0 });
      // a pack hold given back moves nothing
      const third = await ask(1000);
      expect(third?.source).toBe('pack');
      await store().usage.release(third!.id);
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 2, held: 0 });
    });

    it('a free scan given back with no pack hold in flight goes to a pack scan charged while it was held: the credit comes back', async () => {
      const account = await createAccount(store());
      const subject = `acct:${account.id}`;
      await giveCredit(store(), account.id, 3);
      await spend(store(), subject, 1, 3);
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      const ask = (ms: number) => store().usage.reserve(reserveRequest({ subject, limit: 3, packAccountId: account.id, now: at(ms) }));
      const [first, second] = [await ask(-4000), await ask(-3000)]; // the month's last two free scans, held
      const charged = await ask(-2000); // a pack scan while they are held
      expect([first, second, charged].map((r) => r?.source)).toEqual(['allowance', 'allowance', 'pack']);
      await store().scans.commit({ scan: makeScan(), reservation: charged, idempotency: null });
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 2, held: 0 });

      await store().usage.release(first!.id); // its request failed: the free scan goes to the pack scan
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 3, held: 0 });
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 2, held: 1 });
      await store().usage.release(first!.id); // given back twice: nothing more
      await store().usage.release(second!.id); // nothing left to refund: the free scan stays free
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 3, held: 0 });
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 2, held: 0 });
      expect((await ask(0))?.source).toBe('allowance');
    });

    it('a pack scan charged once the free scans were all committed is never refunded', async () => {
      const account = await createAccount(store());
      const subject = `acct:${account.id}`;
      await giveCredit(store(), account.id, 2);
      await spend(store(), subject, 1, 2);
      const ask = () => store().usage.reserve(reserveRequest({ subject, limit: 2, packAccountId: account.id }));
      const free = await ask();
      await store().scans.commit({ scan: makeScan(), reservation: free, idempotency: null });
      const pack = await ask();
      expect(pack?.source).toBe('pack');
      await store().scans.commit({ scan: makeScan(), reservation: pack, idempotency: null });
      // another pack hold given back, and a free one of another month: neither touches the charge
      const other = await ask();
      await store().usage.release(other!.id);
      const nextMonth = await store().usage.reserve(reserveRequest({ subject, limit: 2, packAccountId: account.id, window: 'month:2026-12' }));
      await store().usage.release(nextMonth!.id);
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 1, held: 0 });
      expect(await store().usage.usage(subject, MONTH)).toEqual({ used: 2, held: 0 });
    });

    it('expiring holds also drops the records of pack charges made more than a month before the cutoff', async () => {
      const account = await createAccount(store());
      const subject = `acct:${account.id}`;
      await giveCredit(store(), account.id, 2);
      await spend(store(), subject, 1, 2);
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      const ask = (ms: number) => store().usage.reserve(reserveRequest({ subject, limit: 2, packAccountId: account.id, now: at(ms) }));
      const free = await ask(-40 * 86_400_000); // held by a request that never came back (a crash)
      const charged = await ask(-40 * 86_400_000 + 1);
      expect([free?.source, charged?.source]).toEqual(['allowance', 'pack']);
      await store().scans.commit({ scan: makeScan(), reservation: charged, idempotency: null });
      expect(await store().usage.expireReservations(at(-1000))).toBe(1); // the crashed hold; the record goes with it
      const later = await ask(0);
      expect(later?.source).toBe('allowance');
      await store().usage.release(later!.id); // nothing left to refund
      expect(await store().usage.packBalance(account.id)).toEqual({ credit: 1, held: 0 });
    });

    it('expires holds created before the cutoff only', async () => {
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      await store().usage.reserve(reserveRequest({ subject: 'acct:e', now: at(-60_000) }));
      await store().usage.reserve(reserveRequest({ subject: 'acct:e', now: at(-30_000) }));
      await store().usage.reserve(reserveRequest({ subject: 'acct:e', now: at(0) }));
      expect(await store().usage.expireReservations(at(-29_999))).toBe(2);
      expect(await store().usage.usage('acct:e', MONTH)).toEqual({ used: 0, held: 1 });
      expect(await store().usage.expireReservations(at(-29_999))).toBe(0);
    });
  });
}
