/** The sync half of the scan store: the outbox a desktop pushes from and the hub's merge. */
import type { ScanRecord } from '../../types.js';
import type { ScanStore } from '../store.js';
import { type Db, immediate, run, toMs } from './db.js';
import { type ScanRow, insertScan, nextSeq, readScan, scanFromRow } from './scan-rows.js';

/**
 * Merge rules: fields fixed at analysis time stay as first stored; the measurement with the
 * later measuredAt wins (ties keep the stored one, so a replay changes nothing); a tombstone
 * is final — once deleted, later edits are ignored, and the earliest deletion time is kept.
 */
export function mergeSynced(stored: ScanRecord, incoming: ScanRecord): ScanRecord {
  if (stored.deletedAt !== null) return stored;
  const incomingNewer =
    incoming.measuredAt !== null && (stored.measuredAt === null || incoming.measuredAt > stored.measuredAt);
  return {
    ...stored,
    measurementMm: incomingNewer ? incoming.measurementMm : stored.measurementMm,
    measuredAt: incomingNewer ? incoming.measuredAt : stored.measuredAt,
    deletedAt: incoming.deletedAt,
  };
}

function sameMutableFields(a: ScanRecord, b: ScanRecord): boolean {
  return (
    a.measurementMm === b.measurementMm &&
    toMs(a.measuredAt) === toMs(b.measuredAt) &&
    toMs(a.deletedAt) === toMs(b.deletedAt)
  );
}

export function createScanSync(db: Db): Pick<ScanStore, 'changesSince' | 'upsertSynced'> {
  const changes = db.prepare('SELECT * FROM scans WHERE change_seq > ? ORDER BY change_seq ASC LIMIT ?');
  const update = db.prepare(
    'UPDATE scans SET measurement_mm = ?, measured_at = ?, deleted_at = ?, change_seq = ? WHERE id = ?',
  );
  return {
    changesSince: (afterSeq, limit) =>
      run(() =>
        (changes.all(afterSeq, Math.max(1, Math.floor(limit))) as ScanRow[]).map((row) => ({
          seq: row.change_seq,
          scan: scanFromRow(row),
        })),
      ),
    upsertSynced: (scan) =>
      immediate(db, () => {
        const stored = readScan(db, scan.id);
        if (stored === null) {
          insertScan(db, scan);
          return readScan(db, scan.id)!;
        }
        const merged = mergeSynced(stored, scan);
        if (sameMutableFields(stored, merged)) return stored;
        update.run(merged.measurementMm, toMs(merged.measuredAt), toMs(merged.deletedAt), nextSeq(db), scan.id);
        return merged;
      }),
  };
}
