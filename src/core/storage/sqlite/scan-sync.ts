/** The sync half of the scan store: the outbox a desktop pushes from and the hub's merge. */
import type { ScanStore } from '../store.js';
import { mergeSynced, sameMutableFields } from '../sync-merge.js';
import { type Db, immediate, run } from './db.js';
import { type ScanRow, type ScanRows, scanFromRow } from './scan-rows.js';

export function createScanSync(db: Db, table: ScanRows): Pick<ScanStore, 'changesSince' | 'countChangesSince' | 'upsertSynced'> {
  const changes = db.prepare('SELECT * FROM scans WHERE change_seq > ? ORDER BY change_seq ASC LIMIT ?');
  const count = db.prepare('SELECT COUNT(*) AS n FROM (SELECT 1 FROM scans WHERE change_seq > ? LIMIT ?)');
  return {
    changesSince: (afterSeq, limit) =>
      run(() =>
        (changes.all(afterSeq, Math.max(1, Math.floor(limit))) as ScanRow[]).map((row) => ({
          seq: row.change_seq,
          scan: scanFromRow(row),
        })),
      ),
    countChangesSince: (afterSeq, cap) => run(() => (count.get(afterSeq, Math.max(0, Math.floor(cap))) as { n: number }).n),
    upsertSynced: (scan, into) =>
      immediate(db, () => {
        const stored = table.read(scan.id);
        if (stored === null) {
          table.insert(scan);
          return table.read(scan.id)!;
        }
        const merged = mergeSynced(stored, scan, into);
        if (sameMutableFields(stored, merged)) return stored;
        table.updateMutable(merged);
        return merged;
      }),
  };
}
