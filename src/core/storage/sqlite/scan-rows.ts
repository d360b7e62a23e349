/** The SQLite side of the `scans` row mapping (scan-columns.ts): epoch ms and JSON text. */
import type { ScanRecord } from '../../types.js';
import { type ScanRowOf, scanFromRow as fromColumns, scanInsert, scanUpdate } from '../scan-columns.js';
import { type Db, READ, toMs } from './db.js';

export interface ScanRow extends ScanRowOf<number, string> {
  vehicle_folded: string | null;
  wear: string;
  change_seq: number;
}

const question = () => '?';

export function scanFromRow(row: ScanRow): ScanRecord {
  return fromColumns(row, READ);
}

/**
 * The next change sequence. Scans are never hard-deleted and every write holds the
 * database's write lock, so MAX + 1 is strictly increasing.
 */
export function nextSeq(db: Db): number {
  const row = db.prepare('SELECT COALESCE(MAX(change_seq), 0) + 1 AS seq FROM scans').get() as { seq: number };
  return row.seq;
}

export function insertScan(db: Db, scan: ScanRecord): void {
  const { sql, values } = scanInsert(scan, nextSeq(db), toMs, question);
  db.prepare(sql).run(...values);
}

/** Writes every field a correction or a sync merge may change, under a new change sequence. */
export function updateMutable(db: Db, scan: ScanRecord): void {
  const { sql, values } = scanUpdate(scan, nextSeq(db), toMs, question);
  db.prepare(sql).run(...values);
}

export function readScan(db: Db, id: string): ScanRecord | null {
  const row = db.prepare('SELECT * FROM scans WHERE id = ?').get(id) as ScanRow | undefined;
  return row ? scanFromRow(row) : null;
}
