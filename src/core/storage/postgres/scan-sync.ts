/** The sync half of the scan store on PostgreSQL: the outbox a desktop pushes from and the hub's merge. */
import type { ScanStore } from '../store.js';
import { mergeSynced, sameMutableFields } from '../sync-merge.js';
import { num, type Db } from './db.js';
import { type ScanRow, insertScan, toScan, updateMutable } from './scan-rows.js';

export function scanSync(db: Db): Pick<ScanStore, 'changesSince' | 'countChangesSince' | 'upsertSynced'> {
  return {
    async countChangesSince(afterSeq, cap) {
      const [row] = await db.query<{ n: string }>('SELECT count(*) AS n FROM (SELECT 1 FROM scans WHERE change_seq > $1 LIMIT $2) AS pending', [
        afterSeq,
        Math.max(0, Math.floor(cap)),
      ]);
      return num(row!.n);
    },
    async changesSince(afterSeq, limit) {
      const rows = await db.query<ScanRow>('SELECT * FROM scans WHERE change_seq > $1 ORDER BY change_seq LIMIT $2', [
        afterSeq,
        Math.max(1, Math.floor(limit)),
      ]);
      return rows.map((row) => ({ seq: num(row.change_seq), scan: toScan(row) }));
    },
    upsertSynced(scan, into) {
      return db.transaction(async (tx) => {
        const [stored] = await tx.query<ScanRow>('SELECT * FROM scans WHERE id = $1 FOR UPDATE', [scan.id]);
        if (!stored) {
          if (await insertScan(tx, scan, true)) return scan;
          throw Object.assign(new Error('concurrent first upload of one scan'), { code: '40001' });
        }
        const current = toScan(stored);
        const merged = mergeSynced(current, scan, into);
        if (sameMutableFields(current, merged)) return current;
        await updateMutable(tx, merged);
        return merged;
      });
    },
  };
}
