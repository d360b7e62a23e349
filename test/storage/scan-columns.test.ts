import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { insertValues, scanSql, updateValues } from '../../src/core/storage/scan-columns.js';
import { migrate } from '../../src/core/storage/sqlite/migrate.js';
import { createScanRows } from '../../src/core/storage/sqlite/scan-rows.js';
import type { ScanResult } from '../../src/core/types.js';
import { makeScan } from '../support/store.js';

const asIs = (at: Date | null) => at;
const marks = (sql: string, mark: RegExp) => sql.match(mark)?.length ?? 0;

describe('scan columns', () => {
  it('builds each write once per placeholder style, its parameters in the same number and order', () => {
    const question = scanSql(() => '?');
    const dollar = scanSql((n) => `$${n}`);
    const scan = makeScan({ vehicle: 'AB 123', measurementMm: 4.2, measuredAt: new Date('2026-11-22T00:00:00Z') });

    expect(marks(question.insert, /\?/g)).toBe(insertValues(scan, 7, asIs).length);
    expect(marks(question.update, /\?/g)).toBe(updateValues(scan, 7, asIs).length);
    let n = 0;
    expect(dollar.insert).toBe(question.insert.replace(/\?/g, () => `$${++n}`));
    expect(dollar.update).toMatch(/^UPDATE scans SET vehicle = \$1, .* change_seq = \$10 WHERE id = \$11$/);
    expect(updateValues(scan, 7, asIs).slice(-2)).toEqual([7, scan.id]);
  });

  it('never serialises the result or the image for an UPDATE, which does not write them', () => {
    const result = { ...makeScan().result, toJSON: () => expect.unreachable('result serialised') } as ScanResult;
    const scan = makeScan({ result, vehicle: 'ab-123' });
    const values = updateValues(scan, 3, asIs);
    expect(values.slice(0, 4)).toEqual(['ab-123', 'ab-123', 'AB123', null]);
    expect(() => insertValues(scan, 3, asIs)).toThrow('result serialised');
  });
});

describe('SQLite scan rows', () => {
  const open: Database.Database[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
  });

  it('prepares its statements once, not on each write or read', () => {
    const db = new Database(':memory:');
    open.push(db);
    migrate(db, ':memory:', new ManualClock());
    const prepare = vi.spyOn(db, 'prepare');
    const rows = createScanRows(db);
    const prepared = prepare.mock.calls.length;

    const scan = makeScan();
    rows.insert(scan);
    rows.updateMutable({ ...scan, vehicle: 'XY 9' });
    rows.insert(makeScan());

    expect(rows.read(scan.id)).toMatchObject({ id: scan.id, vehicle: 'XY 9' });
    expect(rows.nextSeq()).toBe(4);
    expect(prepare).toHaveBeenCalledTimes(prepared);
  });
});
