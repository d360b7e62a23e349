import { describe, expect, it } from 'vitest';
import type { ScanRecord } from '../../../src/core/types.js';
import { makeScan } from '../../support/store.js';
import type { GetStore } from './fixtures.js';

const T = (iso: string) => new Date(`2026-11-21T${iso}Z`);

export function syncConformance(store: GetStore): void {
  describe('scans: sync outbox', () => {
    it('gives every commit, measurement and deletion a new, strictly increasing seq', async () => {
      const a = makeScan();
      const b = makeScan();
      await store().scans.commit({ scan: a, reservation: null, idempotency: null });
      await store().scans.commit({ scan: b, reservation: null, idempotency: null });
      const initial = await store().scans.changesSince(0, 100);
      expect(initial.map((c) => c.scan.id)).toEqual([a.id, b.id]);
      expect(initial[0]!.seq).toBeLessThan(initial[1]!.seq);

      await store().scans.setMeasurement(a.id, 4.5, T('13:00:00.000'));
      await store().scans.markDeleted(b.id, T('13:05:00.000'));
      const after = await store().scans.changesSince(initial[1]!.seq, 100);
      expect(after.map((c) => c.scan.id)).toEqual([a.id, b.id]);
      expect(after[0]!.seq).toBeGreaterThan(initial[1]!.seq);
      expect(after[1]!.seq).toBeGreaterThan(after[0]!.seq);
      expect(after[0]!.scan.measurementMm).toBe(4.5);
      expect(after[1]!.scan.deletedAt).toEqual(T('13:05:00.000'));

      const all = await store().scans.changesSince(0, 100);
      expect(all.map((c) => c.scan.id)).toEqual([a.id, b.id]);
      expect(await store().scans.changesSince(after[1]!.seq, 100)).toEqual([]);
    });

    it('honours the limit, ascending by seq', async () => {
      for (let i = 0; i < 5; i++) await store().scans.commit({ scan: makeScan(), reservation: null, idempotency: null });
      const firstTwo = await store().scans.changesSince(0, 2);
      expect(firstTwo).toHaveLength(2);
      // the status's count: what changesSince would give, up to the cap
      expect(await store().scans.countChangesSince(0, 100)).toBe((await store().scans.changesSince(0, 100)).length);
      expect(await store().scans.countChangesSince(0, 2)).toBe(2);
      expect(await store().scans.countChangesSince(firstTwo[1]!.seq, 100)).toBe(3);
      expect(await store().scans.countChangesSince(Number.MAX_SAFE_INTEGER, 100)).toBe(0);
      const rest = await store().scans.changesSince(firstTwo[1]!.seq, 10);
      expect(rest).toHaveLength(3);
      const seqs = [...firstTwo, ...rest].map((c) => c.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(seqs).size).toBe(5);
    });
  });

  describe('scans: upsertSynced', () => {
    const pushed = (overrides: Partial<ScanRecord> = {}) => makeScan({ id: 'synced-1', accountId: 'hub-acct', source: 'sync', vehicle: 'Golf', ...overrides });

    it('inserts an unknown scan as is, without charging, and records a change', async () => {
      const scan = pushed({ measurementMm: 6.1, measuredAt: T('09:00:00.000') });
      expect(await store().scans.upsertSynced(scan)).toEqual(scan);
      expect(await store().scans.get(scan.id)).toEqual(scan);
      expect((await store().scans.changesSince(0, 10)).map((c) => c.scan.id)).toEqual([scan.id]);
    });

    it('is idempotent: a replay changes nothing, not even the seq', async () => {
      const scan = pushed({ measurementMm: 6.1, measuredAt: T('09:00:00.000') });
      await store().scans.upsertSynced(scan);
      const [before] = await store().scans.changesSince(0, 10);
      expect(await store().scans.upsertSynced(scan)).toEqual(scan);
      expect(await store().scans.changesSince(0, 10)).toEqual([before]);
    });

    it('keeps immutable fields and takes the later measurement', async () => {
      const original = pushed({ measurementMm: 6.1, measuredAt: T('09:00:00.000') });
      await store().scans.upsertSynced(original);
      const edited = pushed({
        vehicle: 'Changed',
        createdAt: T('23:00:00.000'),
        result: { ...original.result, estimatedDepthMm: 1.0 },
        measurementMm: 5.9,
        measuredAt: T('10:00:00.000'),
      });
      const merged = await store().scans.upsertSynced(edited);
      expect(merged).toEqual({ ...original, measurementMm: 5.9, measuredAt: T('10:00:00.000') });
      expect(await store().scans.get(original.id)).toEqual(merged);
    });

    it('ignores an older measurement, including an older clear', async () => {
      const current = pushed({ measurementMm: 6.1, measuredAt: T('10:00:00.000') });
      await store().scans.upsertSynced(current);
      await store().scans.upsertSynced(pushed({ measurementMm: 3.0, measuredAt: T('09:59:59.999') }));
      await store().scans.upsertSynced(pushed({ measurementMm: null, measuredAt: null }));
      expect(await store().scans.get(current.id)).toEqual(current);
    });

    it('keeps the stored reading on a tie: another reading with the same measuredAt changes nothing and records no change', async () => {
      const current = pushed({ measurementMm: 6.1, measuredAt: T('10:00:00.000') });
      await store().scans.upsertSynced(current);
      const [before] = await store().scans.changesSince(0, 10);
      // two desks that read the same tyre in the same millisecond: the hub keeps what it had
      expect(await store().scans.upsertSynced(pushed({ measurementMm: 3.0, measuredAt: T('10:00:00.000') }))).toEqual(current);
      expect(await store().scans.get(current.id)).toEqual(current);
      expect(await store().scans.changesSince(0, 10)).toEqual([before]);
    });

    it('lets a deletion win over edits, before and after it', async () => {
      await store().scans.upsertSynced(pushed({ measurementMm: 6.1, measuredAt: T('09:00:00.000') }));
      const deletedAt = T('11:00:00.000');
      const deleted = await store().scans.upsertSynced(pushed({ deletedAt }));
      expect(deleted).toMatchObject({ deletedAt, measurementMm: 6.1 });
      const later = await store().scans.upsertSynced(pushed({ measurementMm: 2.0, measuredAt: T('12:00:00.000') }));
      expect(later).toEqual(deleted);
      expect(await store().scans.get('synced-1')).toEqual(deleted);
      const changes = await store().scans.changesSince(0, 10);
      expect(changes).toHaveLength(1);
      expect(changes[0]!.scan.deletedAt).toEqual(deletedAt);
    });

    it('takes both the deletion and a newer reading that arrive together', async () => {
      await store().scans.upsertSynced(pushed({ measurementMm: 6.1, measuredAt: T('09:00:00.000') }));
      const deletedAt = T('11:00:00.000');
      const merged = await store().scans.upsertSynced(pushed({ measurementMm: 3.2, measuredAt: T('10:00:00.000'), deletedAt }));
      expect(merged).toMatchObject({ deletedAt, measurementMm: 3.2, measuredAt: T('10:00:00.000') });
      expect(await store().scans.get('synced-1')).toEqual(merged);
    });

    it("merges only into the copy it is told to: another account's or shop's copy, or any copy on an insert-only push, stays as it is", async () => {
      const stored = pushed({ apiKeyId: 'key-main', measurementMm: 6.1, measuredAt: T('09:00:00.000') });
      await store().scans.upsertSynced(stored);
      const edit = { measurementMm: 2.0, measuredAt: T('12:00:00.000'), deletedAt: T('12:30:00.000') };
      expect(await store().scans.upsertSynced(pushed({ ...edit, apiKeyId: 'key-harbour' }))).toEqual(stored);
      expect(await store().scans.upsertSynced(pushed({ ...edit, apiKeyId: 'key-main', accountId: 'other-acct' }))).toEqual(stored);
      expect(await store().scans.upsertSynced(pushed({ ...edit, apiKeyId: 'key-main' }), 'none')).toEqual(stored);
      expect(await store().scans.get(stored.id)).toEqual(stored);
      expect(await store().scans.changesSince(0, 10)).toHaveLength(1);
      // the copy the caller checked (a shop that replaced a revoked key) is merged into
      const merged = await store().scans.upsertSynced(pushed({ ...edit, apiKeyId: 'key-harbour' }), { apiKeyId: 'key-main' });
      expect(merged).toEqual({ ...stored, ...edit });
      expect(await store().scans.get(stored.id)).toEqual(merged);
    });

    it('merges into a scan this store committed itself', async () => {
      const local = makeScan({ accountId: 'hub-acct' });
      await store().scans.commit({ scan: local, reservation: null, idempotency: null });
      const merged = await store().scans.upsertSynced({ ...local, measurementMm: 7.2, measuredAt: T('14:00:00.000') });
      expect(merged).toEqual({ ...local, measurementMm: 7.2, measuredAt: T('14:00:00.000') });
    });
  });
}
