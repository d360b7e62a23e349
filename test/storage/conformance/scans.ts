import { describe, expect, it } from 'vitest';
import { makeScan } from '../../support/store.js';
import { type GetStore, MONTH, NOW, createAccount, reserveRequest } from './fixtures.js';
import { correctionsConformance } from './corrections.js';
import { scanListConformance } from './scan-list.js';

export function scanConformance(store: GetStore): void {
  describe('scans: commit', () => {
    it('charges the allowance, drops the hold and stores the scan exactly', async () => {
      const reservation = await store().usage.reserve(reserveRequest({ subject: 'ip:9.9.9.9' }));
      const scan = makeScan({
        vehicle: 'VW Golf ÄB-123',
        position: 'FL',
        createdAt: new Date('2026-11-21T10:11:12.345Z'),
        result: { ...makeScan().result, grooves: [{ index: 0, depthMm: 5.4 }] },
      });
      await store().scans.commit({ scan, reservation, idempotency: null });
      expect(await store().usage.usage('ip:9.9.9.9', MONTH)).toEqual({ used: 1, held: 0 });
      expect(await store().scans.get(scan.id)).toEqual(scan);
      expect(await store().scans.get('missing')).toBeNull();
    });

    it('spends one pack credit for a pack reservation', async () => {
      const account = await createAccount(store());
      await store().licenses.redeem({
        codeId: 'pack-c',
        accountId: account.id,
        kind: 'pack',
        scans: 3,
        expiresAt: null,
        redeemedAt: NOW,
      });
      const reservation = await store().usage.reserve(reserveRequest({ subject: `acct:${account.id}`, limit: 0, packAccountId: account.id }));
      await store().scans.commit({ scan: makeScan({ accountId: account.id }), reservation, idempotency: null });
      expect((await store().accounts.findById(account.id))?.packCredit).toBe(2);
      expect(await store().usage.usage(`acct:${account.id}`, MONTH)).toEqual({ used: 0, held: 0 });
    });

    it('stores a scan without a reservation and charges nothing', async () => {
      const scan = makeScan();
      await store().scans.commit({ scan, reservation: null, idempotency: null });
      expect(await store().scans.get(scan.id)).toEqual(scan);
    });

    it('charges a reservation once even if committed twice, and never below zero credit', async () => {
      const account = await createAccount(store());
      await store().licenses.redeem({
        codeId: 'p1',
        accountId: account.id,
        kind: 'pack',
        scans: 1,
        expiresAt: null,
        redeemedAt: NOW,
      });
      const reservation = await store().usage.reserve(reserveRequest({ subject: 's', limit: 0, packAccountId: account.id }));
      await store().scans.commit({ scan: makeScan(), reservation, idempotency: null });
      await store().scans.commit({ scan: makeScan(), reservation, idempotency: null });
      expect((await store().accounts.findById(account.id))?.packCredit).toBe(0);
    });

    it('is all or nothing: a duplicate scan id leaves no charge, the hold and the claim in flight', async () => {
      const existing = makeScan();
      await store().scans.commit({ scan: existing, reservation: null, idempotency: null });
      const reservation = await store().usage.reserve(reserveRequest({ subject: 'acct:atomic' }));
      await store().idempotency.begin({ callerKey: 'acct:atomic', key: 'k1', requestHash: 'r', createdAt: NOW }, new Date(0));
      await expect(
        store().scans.commit({
          scan: makeScan({ id: existing.id, vehicle: 'other' }),
          reservation,
          idempotency: { callerKey: 'acct:atomic', key: 'k1', response: { status: 200, body: {}, headers: {} } },
        }),
      ).rejects.toThrow();
      expect(await store().usage.usage('acct:atomic', MONTH)).toEqual({ used: 0, held: 1 });
      expect(await store().scans.get(existing.id)).toEqual(existing);
      const again = await store().idempotency.begin({ callerKey: 'acct:atomic', key: 'k1', requestHash: 'r', createdAt: NOW }, new Date(0));
      expect(again).toMatchObject({ claimed: false, existing: { response: null } });
    });

    it('completes the idempotency record with the response', async () => {
      const claim = { callerKey: 'ip:1.1.1.1', key: 'retry-1', requestHash: 'sha', createdAt: NOW };
      expect(await store().idempotency.begin(claim, new Date(0))).toEqual({ claimed: true });
      const response = { status: 200, body: { success: true, data: { scanId: 'x' } }, headers: { 'x-ratelimit-limit': '3' } };
      await store().scans.commit({
        scan: makeScan(),
        reservation: null,
        idempotency: { callerKey: claim.callerKey, key: claim.key, response },
      });
      expect(await store().idempotency.begin({ ...claim, requestHash: 'other' }, new Date(0))).toEqual({
        claimed: false,
        existing: { ...claim, response },
      });
    });
  });

  describe('scans: edits', () => {
    it('soft-deletes once; get still returns the tombstone', async () => {
      const scan = makeScan();
      await store().scans.commit({ scan, reservation: null, idempotency: null });
      const at = new Date('2026-11-22T09:00:00.000Z');
      expect(await store().scans.markDeleted(scan.id, at)).toBe(true);
      expect(await store().scans.markDeleted(scan.id, at)).toBe(false);
      expect(await store().scans.markDeleted('missing', at)).toBe(false);
      expect(await store().scans.get(scan.id)).toEqual({ ...scan, deletedAt: at });
    });

    it('sets and clears the measurement of a live scan only', async () => {
      const scan = makeScan();
      await store().scans.commit({ scan, reservation: null, idempotency: null });
      const at = new Date('2026-11-21T15:00:00.250Z');
      expect(await store().scans.setMeasurement(scan.id, 5.25, at)).toBe(true);
      expect(await store().scans.get(scan.id)).toMatchObject({ measurementMm: 5.25, measuredAt: at });
      const later = new Date(at.getTime() + 1);
      expect(await store().scans.setMeasurement(scan.id, null, later)).toBe(true);
      expect(await store().scans.get(scan.id)).toMatchObject({ measurementMm: null, measuredAt: later });
      expect(await store().scans.setMeasurement('missing', 4, at)).toBe(false);
      await store().scans.markDeleted(scan.id, at);
      expect(await store().scans.setMeasurement(scan.id, 4, at)).toBe(false);
    });
  });

  describe('scans: imageKeysOf', () => {
    it('answers the image keys of the live scans asked about, synced ones included; a tombstone refers to no file', async () => {
      const live = makeScan();
      const deleted = makeScan();
      const synced = makeScan({ source: 'sync', accountId: 'hub-acct' });
      const other = makeScan();
      for (const scan of [live, deleted, other]) await store().scans.commit({ scan, reservation: null, idempotency: null });
      await store().scans.upsertSynced(synced);
      await store().scans.markDeleted(deleted.id, NOW);

      const keys = await store().scans.imageKeysOf([live.id, deleted.id, synced.id, 'unknown-id', live.id]);
      expect(new Set(keys)).toEqual(new Set([live, synced].flatMap((scan) => [scan.image.originalKey, scan.image.thumbnailKey])));
      expect(await store().scans.imageKeysOf([])).toEqual([]);
      expect(await store().scans.imageKeysOf(['unknown-id'])).toEqual([]);
    });

    it('takes a batch of hundreds of ids in one call', async () => {
      const scan = makeScan();
      await store().scans.commit({ scan, reservation: null, idempotency: null });
      const ids = [...Array.from({ length: 999 }, (_, i) => `missing-${i}`), scan.id];
      expect(await store().scans.imageKeysOf(ids)).toHaveLength(2);
    });
  });

  scanListConformance(store);
  correctionsConformance(store);
}
