/**
 * Issue 42 on both stores: the plate key (search, one vehicle, the vehicle view), corrections
 * with their history and change sequence, and their sync merge.
 */
import { describe, expect, it } from 'vitest';
import { WEAR_CLASSES, wearForDepth, type Wear } from '../../../src/shared/units.js';
import type { Store } from '../../../src/core/storage/store.js';
import type { ScanRecord } from '../../../src/core/types.js';
import { makeScan } from '../../support/store.js';
import type { GetStore } from './fixtures.js';

const BASE = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3_600_000;
const ACCOUNT = 'acct-corrections';

async function add(store: Store, overrides: Partial<ScanRecord>): Promise<ScanRecord> {
  const scan = makeScan({ accountId: ACCOUNT, ...overrides });
  await store.scans.commit({ scan, reservation: null, idempotency: null });
  return scan;
}

const at = (hours: number) => new Date(BASE + hours * HOUR);

export function correctionsConformance(store: GetStore): void {
  describe('scans: the plate key', () => {
    it('finds a plate whatever its spaces, dashes or case', async () => {
      const plate = await add(store(), { vehicle: 'KA-TW-204', createdAt: at(1) });
      const spaced = await add(store(), { vehicle: 'ka tw 204 (blue)', createdAt: at(2) });
      await add(store(), { vehicle: 'KA-TW-205', createdAt: at(3) });
      await add(store(), { vehicle: null, createdAt: at(4) });
      const ids = async (vehicle: string) => (await store().scans.list({ accountId: ACCOUNT, limit: 10, vehicle })).items.map((s) => s.id);
      for (const query of ['KA TW 204', 'ka-tw-204', 'katw204', 'K.A.T.W.2.0.4', 'ＫＡ－ＴＷ－２０４']) {
        expect(await ids(query), query).toEqual([spaced.id, plate.id]);
      }
      expect(await ids('TW 20')).toHaveLength(3);
      // the export's filter is the same one
      expect((await store().scans.all({ accountId: ACCOUNT, vehicle: 'ka tw 204' })).map((s) => s.id)).toEqual([plate.id, spaced.id]);
    });

    it('lists one vehicle exactly, or the scans without one', async () => {
      const a = await add(store(), { vehicle: 'KA-TW-204', createdAt: at(1) });
      await add(store(), { vehicle: 'KA-TW-2045', createdAt: at(2) });
      const none = await add(store(), { vehicle: null, createdAt: at(3) });
      const dashes = await add(store(), { vehicle: '---', createdAt: at(4) });
      const exact = await store().scans.list({ accountId: ACCOUNT, limit: 10, vehicleKey: 'KATW204' });
      expect(exact.items.map((s) => s.id)).toEqual([a.id]);
      const without = await store().scans.list({ accountId: ACCOUNT, limit: 10, hasVehicle: false });
      expect(without.items.map((s) => s.id)).toEqual([dashes.id, none.id]);
      expect((await store().scans.list({ accountId: ACCOUNT, limit: 10, hasVehicle: true })).items).toHaveLength(2);
    });

    it('groups by vehicle, newest visit first, each with its newest scans, paged', async () => {
      const golf1 = await add(store(), { vehicle: 'KA-TW-204', position: 'FL', createdAt: at(1) });
      const polo = await add(store(), { vehicle: 'B-PO 1', createdAt: at(2) });
      const golf2 = await add(store(), { vehicle: 'ka tw 204', position: 'FR', createdAt: at(3) });
      const loose = await add(store(), { vehicle: null, createdAt: at(4) });
      const golf3 = await add(store(), { vehicle: 'KA TW 204', position: 'RL', createdAt: at(5) });
      await add(store(), { vehicle: 'KA-TW-204', accountId: 'someone-else', createdAt: at(6) });
      const gone = await add(store(), { vehicle: 'GONE 1', createdAt: at(7) });
      await store().scans.markDeleted(gone.id, at(8));

      const all = await store().scans.vehicles({ accountId: ACCOUNT, limit: 10, scansPerVehicle: 2 });
      expect(all.nextCursor).toBeNull();
      expect(all.items.map((g) => [g.vehicleKey, g.scanCount, g.lastScanAt.getTime(), g.firstScanAt.getTime()])).toEqual([
        ['KATW204', 3, at(5).getTime(), at(1).getTime()],
        [null, 1, at(4).getTime(), at(4).getTime()],
        ['BPO1', 1, at(2).getTime(), at(2).getTime()],
      ]);
      expect(all.items[0]!.scans.map((s) => s.id)).toEqual([golf3.id, golf2.id]);
      expect(all.items[1]!.scans.map((s) => s.id)).toEqual([loose.id]);
      expect(all.items[2]!.scans).toEqual([polo]);

      // page by page: each group once, in the same order
      const seen: Array<string | null> = [];
      let cursor: string | undefined;
      do {
        const page = await store().scans.vehicles({ accountId: ACCOUNT, limit: 1, scansPerVehicle: 1, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items.map((g) => g.vehicleKey));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual(['KATW204', null, 'BPO1']);

      // filters apply to the scans before grouping
      const filtered = await store().scans.vehicles({ accountId: ACCOUNT, limit: 10, scansPerVehicle: 5, to: at(2) });
      expect(filtered.items.map((g) => [g.vehicleKey, g.scanCount])).toEqual([
        ['BPO1', 1],
        ['KATW204', 1],
      ]);
      expect(filtered.items[1]!.scans.map((s) => s.id)).toEqual([golf1.id]);
      const searched = await store().scans.vehicles({ accountId: ACCOUNT, limit: 10, scansPerVehicle: 5, vehicle: 'tw-204' });
      expect(searched.items.map((g) => g.vehicleKey)).toEqual(['KATW204']);
    });

    it('orders groups of the same last time by key, and pages through them', async () => {
      for (const vehicle of ['C 1', 'A 1', 'B 1', null]) await add(store(), { vehicle, createdAt: at(1) });
      const keys: Array<string | null> = [];
      let cursor: string | undefined;
      do {
        const page = await store().scans.vehicles({ accountId: ACCOUNT, limit: 3, scansPerVehicle: 1, ...(cursor ? { cursor } : {}) });
        keys.push(...page.items.map((g) => g.vehicleKey));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(keys).toEqual([null, 'A1', 'B1', 'C1']);
    });

    it('refuses a malformed vehicle cursor', async () => {
      for (const cursor of [
        '!!',
        Buffer.from('[1,"a b"]').toString('base64url'),
        Buffer.from('[1e20,"A"]').toString('base64url'),
        Buffer.from('{"a":1}').toString('base64url'),
      ]) {
        await expect(store().scans.vehicles({ accountId: ACCOUNT, limit: 5, scansPerVehicle: 1, cursor })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      }
    });
  });

  describe('scans: corrections', () => {
    it('changes vehicle, position and reading, records each change, and takes a new change sequence', async () => {
      const scan = await add(store(), { vehicle: 'KA-TW-2O4', position: null, createdAt: at(1) });
      const [before] = (await store().scans.changesSince(0, 1000)).filter((c) => c.scan.id === scan.id);
      const edited = await store().scans.edit(scan.id, { vehicle: 'KA-TW-204', position: 'FL', measurementMm: 3.2 }, { at: at(2), via: 'session' });
      expect(edited).toMatchObject({ vehicle: 'KA-TW-204', position: 'FL', measurementMm: 3.2, measuredAt: at(2), editedAt: at(2) });
      expect(edited!.changes).toEqual([
        { at: at(2), field: 'vehicle', from: 'KA-TW-2O4', to: 'KA-TW-204', via: 'session' },
        { at: at(2), field: 'position', from: null, to: 'FL', via: 'session' },
        { at: at(2), field: 'measurementMm', from: null, to: 3.2, via: 'session' },
      ]);
      expect(await store().scans.get(scan.id)).toEqual(edited);
      const [after] = (await store().scans.changesSince(0, 1000)).filter((c) => c.scan.id === scan.id);
      expect(after!.seq).toBeGreaterThan(before!.seq);
      expect(after!.scan).toEqual(edited);
      // the search finds it by its corrected plate, the old one no more
      expect((await store().scans.list({ accountId: ACCOUNT, limit: 5, vehicleKey: 'KATW204' })).items.map((s) => s.id)).toEqual([scan.id]);
      expect((await store().scans.list({ accountId: ACCOUNT, limit: 5, vehicle: 'KATW2O4' })).items).toEqual([]);
    });

    it('writes nothing when nothing changes; a reading sent again is a new reading time', async () => {
      const scan = await add(store(), { vehicle: 'X 1', position: 'RR', measurementMm: 4, measuredAt: at(1) });
      const seq = async () => (await store().scans.changesSince(0, 1000)).find((c) => c.scan.id === scan.id)!.seq;
      const first = await seq();
      expect(await store().scans.edit(scan.id, { vehicle: 'X 1', position: 'RR' }, { at: at(2), via: 'key' })).toEqual(scan);
      expect(await seq()).toBe(first);
      const again = await store().scans.edit(scan.id, { measurementMm: 4 }, { at: at(3), via: 'key' });
      expect(again).toMatchObject({ measurementMm: 4, measuredAt: at(3), changes: [] });
      expect(await seq()).toBeGreaterThan(first);
    });

    it('clears, keeps the newest 50 changes, and refuses an absent or deleted scan', async () => {
      const scan = await add(store(), { vehicle: 'A', position: 'FL' });
      const cleared = await store().scans.edit(scan.id, { vehicle: null, position: null }, { at: at(1), via: 'anonymous' });
      expect(cleared).toMatchObject({ vehicle: null, position: null });
      expect((await store().scans.list({ accountId: ACCOUNT, limit: 5, hasVehicle: false })).items.map((s) => s.id)).toEqual([scan.id]);
      for (let i = 0; i < 30; i++) await store().scans.edit(scan.id, { vehicle: `V${i}`, position: i % 2 ? 'FR' : 'RL' }, { at: at(2 + i), via: 'session' });
      const kept = (await store().scans.get(scan.id))!.changes;
      expect(kept).toHaveLength(50);
      expect(kept[kept.length - 1]).toMatchObject({ field: 'position', to: 'FR', at: at(31) });
      expect(await store().scans.edit('no-such-scan', { vehicle: 'x' }, { at: at(40), via: 'session' })).toBeNull();
      await store().scans.markDeleted(scan.id, at(41));
      expect(await store().scans.edit(scan.id, { vehicle: 'x' }, { at: at(42), via: 'session' })).toBeNull();
    });
  });

  describe('scans: corrections through sync', () => {
    const pushed = (overrides: Partial<ScanRecord>) =>
      makeScan({ id: 'sync-corrected-scan-0001', accountId: 'hub-acct', apiKeyId: 'key-1', source: 'sync', vehicle: 'KA-TW-2O4', ...overrides });

    it('takes the later correction of vehicle and position, joins the histories, and ignores an older one', async () => {
      await store().scans.upsertSynced(pushed({}));
      const change = { at: at(2), field: 'vehicle' as const, from: 'KA-TW-2O4', to: 'KA-TW-204', via: 'sync' as const };
      const merged = await store().scans.upsertSynced(pushed({ vehicle: 'KA-TW-204', position: 'FL', editedAt: at(2), changes: [change] }));
      expect(merged).toMatchObject({ vehicle: 'KA-TW-204', position: 'FL', editedAt: at(2), changes: [change] });
      expect((await store().scans.list({ accountId: 'hub-acct', limit: 5, vehicle: 'ka tw 204' })).items).toHaveLength(1);
      // a replay changes nothing; an older correction loses, its history is kept
      const seq = (await store().scans.changesSince(0, 1000)).find((c) => c.scan.id === merged.id)!.seq;
      expect(await store().scans.upsertSynced(pushed({ vehicle: 'KA-TW-204', position: 'FL', editedAt: at(2), changes: [change] }))).toEqual(merged);
      expect((await store().scans.changesSince(0, 1000)).find((c) => c.scan.id === merged.id)!.seq).toBe(seq);
      const old = { at: at(1), field: 'position' as const, from: null, to: 'RR', via: 'sync' as const };
      const later = await store().scans.upsertSynced(pushed({ vehicle: 'OLD', position: 'RR', editedAt: at(1), changes: [old] }));
      expect(later).toMatchObject({ vehicle: 'KA-TW-204', position: 'FL', editedAt: at(2), changes: [old, change] });
    });
  });

  describe('scans: the wear filter by the depth of record (the gauge wins where it exists)', () => {
    /** The band a scan's badge shows (http/wire.ts ofRecord.wear): the gauge reading's, else the estimate's. */
    const ofRecord = (scan: ScanRecord): Wear => (scan.measurementMm === null ? scan.result.wear : wearForDepth(scan.measurementMm));
    const estimated = (wear: Wear, depthMm: number): ScanRecord['result'] => ({ ...makeScan().result, wear, estimatedDepthMm: depthMm });

    it('matches the band of the gauge reading where there is one, on every edge of every band, in the list, the export and the vehicle view', async () => {
      // every band's edges and either side of them, to 2 decimals as readings are stored; each on an estimate of another band
      const readings = [0, 0.01, 1.59, 1.6, 1.61, 2.99, 3, 3.01, 3.2, 4.99, 5, 5.01, 6.99, 7, 7.01, 12.5, 30];
      const scans: ScanRecord[] = [];
      for (const [i, mm] of readings.entries()) {
        const estimate = wearForDepth(mm) === 'good' ? estimated('worn', 2.1) : estimated('good', 5.6);
        scans.push(await add(store(), { vehicle: `R-${i}`, result: estimate, measurementMm: mm, measuredAt: at(i), createdAt: at(i) }));
      }
      // without a reading the estimate's band as analysed decides (even one that is not the band of its depth)
      for (const [i, wear] of WEAR_CLASSES.entries()) {
        scans.push(await add(store(), { vehicle: `E-${i}`, result: estimated(wear, 5.6), createdAt: at(40 + i) }));
      }
      await add(store(), { accountId: 'someone-else', measurementMm: 3.2, measuredAt: at(1) });
      const gone = await add(store(), { measurementMm: 3.2, measuredAt: at(1), createdAt: at(60) });
      await store().scans.markDeleted(gone.id, at(61));

      for (const wear of WEAR_CLASSES) {
        const expected = scans.filter((scan) => ofRecord(scan) === wear);
        const newestFirst = [...expected].reverse().map((scan) => scan.id);
        expect(expected.length, wear).toBeGreaterThan(1);
        const listed = await store().scans.list({ accountId: ACCOUNT, limit: 50, wear });
        expect(
          listed.items.map((scan) => scan.id),
          `list ${wear}`,
        ).toEqual(newestFirst);
        const exported = await store().scans.all({ accountId: ACCOUNT, wear });
        expect(
          exported.map((scan) => scan.id),
          `export ${wear}`,
        ).toEqual(expected.map((scan) => scan.id));
        const grouped = await store().scans.vehicles({ accountId: ACCOUNT, limit: 50, scansPerVehicle: 5, wear });
        expect(
          grouped.items.flatMap((group) => group.scans.map((scan) => scan.id)),
          `vehicles ${wear}`,
        ).toEqual(newestFirst);
      }
    });

    it('follows a reading as it is recorded, corrected, cleared, and merged from a desk', async () => {
      const scan = await add(store(), { vehicle: 'KA-TW-204', result: estimated('medium', 3.8), createdAt: at(1) });
      const wearOf = async (wear: Wear) => (await store().scans.list({ accountId: ACCOUNT, limit: 5, wear })).items.map((s) => s.id);
      expect(await wearOf('medium')).toEqual([scan.id]);
      // PUT /measurement
      await store().scans.setMeasurement(scan.id, 6.4, at(2));
      expect(await wearOf('medium')).toEqual([]);
      expect(await wearOf('good')).toEqual([scan.id]);
      // PATCH
      await store().scans.edit(scan.id, { measurementMm: 1.5 }, { at: at(3), via: 'session' });
      expect(await wearOf('good')).toEqual([]);
      expect(await wearOf('critical')).toEqual([scan.id]);
      // cleared: the estimate again
      await store().scans.edit(scan.id, { measurementMm: null }, { at: at(4), via: 'session' });
      expect(await wearOf('critical')).toEqual([]);
      expect(await wearOf('medium')).toEqual([scan.id]);

      // a hub's copy takes the desk's later reading
      const pushed = makeScan({ id: 'sync-wear-scan-000001', accountId: 'hub-acct', apiKeyId: 'key-1', source: 'sync', result: estimated('medium', 3.8) });
      await store().scans.upsertSynced(pushed);
      const hubWear = async (wear: Wear) => (await store().scans.list({ accountId: 'hub-acct', limit: 5, wear })).items.map((s) => s.id);
      expect(await hubWear('medium')).toEqual([pushed.id]);
      await store().scans.upsertSynced({ ...pushed, measurementMm: 7.2, measuredAt: at(5) });
      expect(await hubWear('medium')).toEqual([]);
      expect(await hubWear('new')).toEqual([pushed.id]);
    });
  });
}
