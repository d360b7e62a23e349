/** The sync wire's corrections (issue 42): editedAt and changes, checked as strictly as the rest of a pushed scan. */
import { describe, expect, it } from 'vitest';
import { fromSyncScan, isScanRefusal, parseSyncScan, toSyncScan } from '../../src/core/sync/wire.js';
import { makeScan } from '../support/store.js';

const at = new Date('2026-11-21T12:00:00.000Z');
const base = () =>
  toSyncScan(
    makeScan({
      id: 'wire-corrections-0001',
      vehicle: 'KA-TW-204',
      editedAt: at,
      changes: [{ at, field: 'vehicle', from: 'KA-TW-2O4', to: 'KA-TW-204', via: 'key' }],
    }),
  );

describe('corrections on the sync wire', () => {
  it('round-trips; the hub files the history as merged from a shop', () => {
    const wire = parseSyncScan(JSON.stringify(base()));
    expect(wire.editedAt).toBe(at.toISOString());
    const record = fromSyncScan(wire, { accountId: 'a', apiKeyId: 'k' }, { originalKey: 'o', thumbnailKey: 't' });
    expect(record.editedAt).toEqual(at);
    expect(record.changes).toEqual([{ at, field: 'vehicle', from: 'KA-TW-2O4', to: 'KA-TW-204', via: 'sync' }]);
  });

  it('a desk of an earlier version sends neither field: no correction, an empty history', () => {
    const { editedAt: _e, changes: _c, ...old } = base();
    const record = fromSyncScan(parseSyncScan(JSON.stringify(old)), { accountId: 'a', apiKeyId: 'k' }, { originalKey: 'o', thumbnailKey: 't' });
    expect(record).toMatchObject({ editedAt: null, changes: [] });
  });

  it('refuses, as about the scan, a history that is no history', () => {
    const change = base().changes![0]!;
    const bad: unknown[] = [
      { ...base(), editedAt: 'soon' },
      { ...base(), editedAt: 5 },
      { ...base(), changes: 'none' },
      { ...base(), changes: [{ ...change, field: 'result' }] },
      { ...base(), changes: [{ ...change, via: 'root' }] },
      { ...base(), changes: [{ ...change, at: 'yesterday-ish' }] },
      { ...base(), changes: [{ ...change, to: 'A\u0000B' }] },
      { ...base(), changes: [{ ...change, to: 'x'.repeat(65) }] },
      { ...base(), changes: [{ ...change, to: { $gt: 1 } }] },
      { ...base(), changes: Array.from({ length: 51 }, () => change) },
    ];
    for (const scan of bad) {
      let error: unknown;
      try {
        parseSyncScan(JSON.stringify(scan));
      } catch (caught) {
        error = caught;
      }
      expect(isScanRefusal(error), JSON.stringify(scan).slice(0, 200)).toBe(true);
    }
  });
});
