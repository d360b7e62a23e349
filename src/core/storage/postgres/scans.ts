/**
 * Scans on PostgreSQL: the commit that charges and stores in one transaction, keyset paging,
 * deletion, the gauge reading and corrections. Row mapping and the change sequence are in
 * scan-rows.ts, the filters and the vehicle list in scan-query.ts, the sync outbox in scan-sync.ts.
 */
import { decodeScanCursor, encodeScanCursor } from '../cursor.js';
import { applyEdit } from '../scan-edit.js';
import type { ScanRecord } from '../../types.js';
import type { ScanStore } from '../store.js';
import type { Db, Queryable } from './db.js';
import { where, vehiclePage } from './scan-query.js';
import { type ScanRow, insertScan, lockLiveRow, nextSeq, toScan, updateMutable } from './scan-rows.js';
import { scanSync } from './scan-sync.js';

/**
 * Turn a hold into a charge. Only a hold that still exists is charged: a reservation
 * committed twice, or one already expired, is never charged again.
 */
async function charge(tx: Queryable, reservationId: string): Promise<void> {
  const [held] = await tx.query<{
    source: string;
    subject: string;
    window: string;
    pack_account_id: string | null;
    free_held: boolean;
    created_at: Date;
  }>('DELETE FROM reservations WHERE id = $1 RETURNING source, subject, "window", pack_account_id, free_held, created_at', [reservationId]);
  if (!held) return;
  if (held.source === 'pack') {
    const spent = await tx.query('UPDATE accounts SET pack_credit = pack_credit - 1 WHERE id = $1 AND pack_credit > 0 RETURNING id', [held.pack_account_id]);
    // charged while free scans were held: one of them, given back, comes to this scan (usage.ts release)
    if (spent.length > 0 && held.free_held) {
      await tx.query(
        `INSERT INTO pack_refundable (reservation_id, subject, "window", account_id, held_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [reservationId, held.subject, held.window, held.pack_account_id, held.created_at],
      );
    }
    return;
  }
  await tx.query(
    `INSERT INTO usage_counters (subject, "window", used) VALUES ($1, $2, 1)
     ON CONFLICT (subject, "window") DO UPDATE SET used = usage_counters.used + 1`,
    [held.subject, held.window],
  );
}

function encodeCursor(scan: ScanRecord): string {
  return encodeScanCursor({ createdAtMs: scan.createdAt.getTime(), id: scan.id });
}

export function scanStore(db: Db): ScanStore {
  return {
    commit({ scan, reservation, idempotency }) {
      return db.transaction(async (tx) => {
        if (reservation) await charge(tx, reservation.id);
        if (idempotency) {
          await tx.query('UPDATE idempotency SET response = $3 WHERE caller_key = $1 AND key = $2', [
            idempotency.callerKey,
            idempotency.key,
            JSON.stringify(idempotency.response),
          ]);
        }
        await insertScan(tx, scan, false);
      });
    },
    async get(id) {
      const [row] = await db.query<ScanRow>('SELECT * FROM scans WHERE id = $1', [id]);
      return row ? toScan(row) : null;
    },
    async list(filter) {
      const params: unknown[] = [];
      let sql = `SELECT * FROM scans WHERE ${where(filter, params)}`;
      if (filter.cursor !== undefined) {
        const { createdAtMs, id } = decodeScanCursor(filter.cursor);
        params.push(new Date(createdAtMs), id);
        sql += ` AND (created_at, id) < ($${params.length - 1}, $${params.length})`;
      }
      const limit = Math.max(1, Math.floor(filter.limit)); // as the SQLite store takes it
      params.push(limit + 1);
      sql += ` ORDER BY created_at DESC, id DESC LIMIT $${params.length}`;
      const items = (await db.query<ScanRow>(sql, params)).map(toScan);
      const more = items.length > limit;
      if (more) items.length = limit;
      return { items, nextCursor: more ? encodeCursor(items[items.length - 1]!) : null };
    },
    async all(filter) {
      const params: unknown[] = [];
      const rows = await db.query<ScanRow>(`SELECT * FROM scans WHERE ${where(filter, params)} ORDER BY created_at, id`, params);
      return rows.map(toScan);
    },
    markDeleted(id, at) {
      return db.transaction(async (tx) => {
        // the row first, then the change lock, as upsertSynced takes them: the other order
        // deadlocked against a synced change to the same scan (a 1 s stall each time)
        if (!(await lockLiveRow(tx, id))) return false;
        const seq = await nextSeq(tx);
        const rows = await tx.query('UPDATE scans SET deleted_at = $2, change_seq = $3 WHERE id = $1 AND deleted_at IS NULL RETURNING id', [id, at, seq]);
        return rows.length === 1;
      });
    },
    setMeasurement(id, measurementMm, at) {
      return db.transaction(async (tx) => {
        if (!(await lockLiveRow(tx, id))) return false; // the row, then the change lock (markDeleted)
        const seq = await nextSeq(tx);
        const rows = await tx.query(
          `UPDATE scans SET measurement_mm = $2, measured_at = $3, change_seq = $4
           WHERE id = $1 AND deleted_at IS NULL RETURNING id`,
          [id, measurementMm, at, seq],
        );
        return rows.length === 1;
      });
    },
    edit(id, edit, meta) {
      return db.transaction(async (tx) => {
        // the row, then the change lock (markDeleted)
        const [row] = await tx.query<ScanRow>('SELECT * FROM scans WHERE id = $1 AND deleted_at IS NULL FOR UPDATE', [id]);
        if (!row) return null;
        const stored = toScan(row);
        const next = applyEdit(stored, edit, meta);
        if (next === null) return stored;
        await updateMutable(tx, next);
        return next;
      });
    },
    vehicles: (filter) => vehiclePage(db, filter),
    async imageKeysOf(ids) {
      const rows = await db.query<{ original: string; thumbnail: string }>(
        `SELECT image->>'originalKey' AS original, image->>'thumbnailKey' AS thumbnail
         FROM scans WHERE id = ANY($1::text[]) AND deleted_at IS NULL`,
        [[...ids]],
      );
      return rows.flatMap((row) => [row.original, row.thumbnail]);
    },
    ...scanSync(db),
  };
}
