import { describe, expect, it } from 'vitest';
import type { Wear } from '../../../src/core/analysis/analyzer.js';
import type { Store } from '../../../src/core/storage/store.js';
import type { ScanRecord } from '../../../src/core/types.js';
import { makeScan } from '../../support/store.js';
import type { GetStore } from './fixtures.js';

const BASE = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3_600_000;

async function add(store: Store, overrides: Partial<ScanRecord>): Promise<ScanRecord> {
  const scan = makeScan({ accountId: 'acct-list', ...overrides });
  await store.scans.commit({ scan, reservation: null, idempotency: null });
  return scan;
}

function withWear(wear: Wear): ScanRecord['result'] {
  return { ...makeScan().result, wear };
}

async function pageAll(store: Store, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.scans.list({ accountId: 'acct-list', limit, ...(cursor ? { cursor } : {}) });
    ids.push(...page.items.map((s) => s.id));
    cursor = page.nextCursor ?? undefined;
    pages += 1;
  } while (cursor);
  return { ids, pages };
}

export function scanListConformance(store: GetStore): void {
  describe('scans: list and all', () => {
    it('pages 25 scans by 10, newest first, each exactly once (ties broken by id)', async () => {
      const scans = [];
      // Pairs share a timestamp so the tie-break matters.
      for (let i = 0; i < 25; i++) scans.push(await add(store(), { createdAt: new Date(BASE + Math.floor(i / 2) * HOUR) }));
      const { ids, pages } = await pageAll(store(), 10);
      expect(pages).toBe(3);
      const expected = [...scans].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((s) => s.id);
      expect(ids).toEqual(expected);
    });

    it('keeps a cursor stable while newer scans arrive', async () => {
      for (let i = 0; i < 6; i++) await add(store(), { createdAt: new Date(BASE + i * HOUR) });
      const first = await store().scans.list({ accountId: 'acct-list', limit: 3 });
      await add(store(), { createdAt: new Date(BASE + 100 * HOUR) });
      const second = await store().scans.list({ accountId: 'acct-list', limit: 3, cursor: first.nextCursor! });
      const seen = [...first.items, ...second.items].map((s) => s.createdAt.getTime());
      expect(seen).toEqual([5, 4, 3, 2, 1, 0].map((i) => BASE + i * HOUR));
      expect(second.nextCursor).toBeNull();
    });

    it('refuses a malformed cursor', async () => {
      const listing = store().scans.list({ accountId: 'acct-list', limit: 10, cursor: '!!not a cursor' });
      await expect(listing).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      // well-formed on the outside, but a time no date holds, a NUL, or more than a scan id
      for (const text of ['9999999999999999:zz', '-999999999999999:zz', '1795262400000:a\u0000', '1795262400000:a b', '1795262400000:']) {
        const cursor = Buffer.from(text).toString('base64url');
        await expect(store().scans.list({ accountId: 'acct-list', limit: 10, cursor })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      }
    });

    it('shows only the account’s live scans', async () => {
      const mine = await add(store(), {});
      await add(store(), { accountId: 'someone-else' });
      await add(store(), { accountId: null });
      const gone = await add(store(), {});
      await store().scans.markDeleted(gone.id, new Date(BASE));
      const page = await store().scans.list({ accountId: 'acct-list', limit: 10 });
      expect(page).toEqual({ items: [mine], nextCursor: null });
      expect(await store().scans.all({ accountId: 'acct-list' })).toEqual([mine]);
    });

    it('filters by vehicle substring ignoring case, with % and _ taken literally', async () => {
      const golf = await add(store(), { vehicle: 'VW Golf AB-123' });
      const percent = await add(store(), { vehicle: 'Fleet 100% van' });
      const under = await add(store(), { vehicle: 'plate AB_12' });
      await add(store(), { vehicle: null });
      const ids = async (vehicle: string) => (await store().scans.list({ accountId: 'acct-list', limit: 10, vehicle })).items.map((s) => s.id);
      expect(await ids('golf ab')).toEqual([golf.id]);
      expect(await ids('0%')).toEqual([percent.id]);
      expect(await ids('%')).toEqual([percent.id]);
      // punctuation is no part of a plate (issue 42): "B_1" is B1, in "AB-123" as in "AB_12"; never a wildcard
      expect((await ids('B_1')).sort()).toEqual([golf.id, under.id].sort());
      expect(await ids('ab_123')).toEqual([golf.id]);
      expect(await ids('_')).toEqual([under.id]);
      expect(await ids('zzz')).toEqual([]);
    });

    it('matches vehicles case-insensitively beyond ASCII', async () => {
      const scan = await add(store(), { vehicle: 'ÖAMTC Führer' });
      const page = await store().scans.list({ accountId: 'acct-list', limit: 10, vehicle: 'öamtc FÜHRER' });
      expect(page.items.map((s) => s.id)).toEqual([scan.id]);
    });

    it('filters by wear and by inclusive date bounds', async () => {
      const worn = await add(store(), { result: withWear('worn'), createdAt: new Date(BASE + 1 * HOUR) });
      const good = await add(store(), { result: withWear('good'), createdAt: new Date(BASE + 2 * HOUR) });
      const critical = await add(store(), { result: withWear('critical'), createdAt: new Date(BASE + 3 * HOUR) });
      const list = async (filter: { wear?: Wear; from?: Date; to?: Date }) =>
        (await store().scans.list({ accountId: 'acct-list', limit: 10, ...filter })).items.map((s) => s.id);
      expect(await list({ wear: 'worn' })).toEqual([worn.id]);
      expect(await list({ from: new Date(BASE + 2 * HOUR) })).toEqual([critical.id, good.id]);
      expect(await list({ to: new Date(BASE + 2 * HOUR) })).toEqual([good.id, worn.id]);
      expect(await list({ from: new Date(BASE + 2 * HOUR), to: new Date(BASE + 2 * HOUR) })).toEqual([good.id]);
      expect(await list({ wear: 'good', to: new Date(BASE + HOUR) })).toEqual([]);
    });

    it('filters by the API key a scan came through, paging each shop on its own', async () => {
      const main = [];
      const elm = [];
      // Interleaved, with shared timestamps, so a cursor that ignored the filter would show.
      for (let i = 0; i < 7; i++) {
        const createdAt = new Date(BASE + Math.floor(i / 2) * HOUR);
        main.push(await add(store(), { apiKeyId: 'key-main', source: 'sync', createdAt }));
        elm.push(await add(store(), { apiKeyId: 'key-elm', source: 'sync', createdAt }));
      }
      await add(store(), { apiKeyId: null, source: 'session' });
      await add(store(), { accountId: 'someone-else', apiKeyId: 'key-main' });
      const gone = await add(store(), { apiKeyId: 'key-main' });
      await store().scans.markDeleted(gone.id, new Date(BASE));
      const newestFirst = (scans: ScanRecord[]) =>
        [...scans].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((s) => s.id);

      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store().scans.list({ accountId: 'acct-list', apiKeyId: 'key-main', limit: 3, ...(cursor ? { cursor } : {}) });
        ids.push(...page.items.map((s) => s.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(ids).toEqual(newestFirst(main));
      const elmPage = await store().scans.list({ accountId: 'acct-list', apiKeyId: 'key-elm', limit: 10 });
      expect(elmPage.items.map((s) => s.id)).toEqual(newestFirst(elm));
      expect(await store().scans.list({ accountId: 'acct-list', apiKeyId: 'key-none', limit: 10 })).toEqual({ items: [], nextCursor: null });
    });

    it('exports every matching scan oldest first without paging', async () => {
      const scans = [];
      for (let i = 0; i < 12; i++) {
        const createdAt = new Date(BASE + (12 - i) * HOUR);
        scans.push(await add(store(), { createdAt, result: withWear(i % 2 ? 'good' : 'worn') }));
      }
      const all = await store().scans.all({ accountId: 'acct-list', wear: 'good' });
      expect(all.map((s) => s.id)).toEqual(
        scans
          .filter((_, i) => i % 2)
          .reverse()
          .map((s) => s.id),
      );
      expect(all[0]).toEqual(scans[11]);
    });

    it('filters to the scans with a gauge reading (a cleared reading drops out)', async () => {
      const read = await add(store(), { createdAt: new Date(BASE + HOUR) });
      const cleared = await add(store(), { createdAt: new Date(BASE + 2 * HOUR) });
      await add(store(), { createdAt: new Date(BASE + 3 * HOUR) });
      const gone = await add(store(), { createdAt: new Date(BASE + 4 * HOUR) });
      await add(store(), { accountId: 'someone-else', measurementMm: 5, measuredAt: new Date(BASE) });
      await store().scans.setMeasurement(read.id, 4.2, new Date(BASE + 5 * HOUR));
      await store().scans.setMeasurement(cleared.id, 3, new Date(BASE + 5 * HOUR));
      await store().scans.setMeasurement(cleared.id, null, new Date(BASE + 6 * HOUR));
      await store().scans.setMeasurement(gone.id, 6, new Date(BASE + 5 * HOUR));
      await store().scans.markDeleted(gone.id, new Date(BASE + 6 * HOUR));
      const all = await store().scans.all({ accountId: 'acct-list', measured: true });
      expect(all.map((s) => [s.id, s.measurementMm])).toEqual([[read.id, 4.2]]);
      const page = await store().scans.list({ accountId: 'acct-list', measured: true, limit: 10 });
      expect(page.items.map((s) => s.id)).toEqual([read.id]);
      expect((await store().scans.all({ accountId: 'acct-list' })).length).toBe(3);
    });
  });
}
