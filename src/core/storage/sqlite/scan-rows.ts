/** The SQLite side of the `scans` row mapping (scan-columns.ts): epoch ms and JSON text. */
import type { ScanRecord } from '../../types.js';
import { type ScanRowOf, insertValues, scanFromRow as fromColumns, scanSql, updateValues } from '../scan-columns.js';
import { type Db, READ, toMs } from './db.js';

export interface ScanRow extends ScanRowOf<number, string> {
  vehicle_folded: string | null;
  wear: string;
  change_seq: number;
}

const SQL = scanSql(() => '?');

export function scanFromRow(row: ScanRow): ScanRecord {
  return fromColumns(row, READ);
}

/** The scan store's row writes and its read by id, each statement prepared once per connection. */
export interface ScanRows {
  /**
   * The next change sequence. Scans are never hard-deleted and every write holds the
   * database's write lock, so MAX + 1 is strictly increasing.
   */
  nextSeq(): number;
  insert(scan: ScanRecord): void;
  /** Writes every field a correction or a sync merge may change, under a new change sequence. */
  updateMutable(scan: ScanRecord): void;
  read(id: string): ScanRecord | null;
}

export function createScanRows(db: Db): ScanRows {
  const seq = db.prepare('SELECT COALESCE(MAX(change_seq), 0) + 1 AS seq FROM scans');
  const insert = db.prepare(SQL.insert);
  const update = db.prepare(SQL.update);
  const byId = db.prepare('SELECT * FROM scans WHERE id = ?');
  const nextSeq = () => (seq.get() as { seq: number }).seq;
  return {
    nextSeq,
    insert: (scan) => insert.run(...insertValues(scan, nextSeq(), toMs)),
    updateMutable: (scan) => update.run(...updateValues(scan, nextSeq(), toMs)),
    read: (id) => {
      const row = byId.get(id) as ScanRow | undefined;
      return row ? scanFromRow(row) : null;
    },
  };
}
