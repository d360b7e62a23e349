/**
 * Scans on PostgreSQL: the commit that charges and stores in one transaction,
 * keyset paging, and the sync outbox. Every change takes the next value of
 * scan_change_seq under a transaction-scoped advisory lock held to COMMIT, so
 * sequence numbers become visible in order and a reader of changesSince never
 * skips a change that commits late.
 */
import { vehicleKey } from '../../../shared/vehicle.js';
import { CURSOR_TEXT, decodeVehicleCursor, encodeVehicleCursor, inDateRange } from '../cursor.js';
import { applyEdit, changesFromJson, changesToJson } from '../scan-edit.js';
import { AppError } from '../../errors.js';
import type { ScanRecord, ScanResult, ScanSource, StoredImageInfo, TirePosition } from '../../types.js';
import type { ScanFilter, ScanStore, VehicleFilter, VehiclePage } from '../store.js';
import { mergeSynced, sameMutableFields } from '../sync-merge.js';
import { num, type Db, type Queryable } from './db.js';
import { WEAR_OF_RECORD_SQL } from '../wear-of-record.js';

const CHANGE_LOCK = 7_146_908_218;

interface ScanRow {
  id: string;
  account_id: string | null;
  api_key_id: string | null;
  source: ScanSource;
  created_at: Date;
  vehicle: string | null;
  position: TirePosition | null;
  result: ScanResult;
  image: StoredImageInfo;
  measurement_mm: number | null;
  measured_at: Date | null;
  deleted_at: Date | null;
  change_seq: string;
  vehicle_key: string | null;
  edited_at: Date | null;
  changes: unknown;
}

function toScan(row: ScanRow): ScanRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    source: row.source,
    createdAt: row.created_at,
    vehicle: row.vehicle,
    position: row.position,
    result: row.result,
    image: row.image,
    measurementMm: row.measurement_mm,
    measuredAt: row.measured_at,
    deletedAt: row.deleted_at,
    editedAt: row.edited_at,
    changes: changesFromJson(row.changes),
  };
}

async function nextSeq(tx: Queryable): Promise<number> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [CHANGE_LOCK]);
  const [row] = await tx.query<{ seq: string }>(`SELECT nextval('scan_change_seq') AS seq`);
  return num(row!.seq);
}

/** Locks a live scan's row; false when there is none. */
async function lockLiveRow(tx: Queryable, id: string): Promise<boolean> {
  const rows = await tx.query('SELECT id FROM scans WHERE id = $1 AND deleted_at IS NULL FOR UPDATE', [id]);
  return rows.length === 1;
}

async function insertScan(tx: Queryable, scan: ScanRecord, onConflictNothing: boolean): Promise<boolean> {
  const seq = await nextSeq(tx);
  const rows = await tx.query(
    `INSERT INTO scans (id, account_id, api_key_id, source, created_at, vehicle, vehicle_folded, position, wear,
                        result, image, measurement_mm, measured_at, deleted_at, change_seq, vehicle_key, edited_at, changes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
     ${onConflictNothing ? 'ON CONFLICT (id) DO NOTHING' : ''} RETURNING id`,
    [
      scan.id,
      scan.accountId,
      scan.apiKeyId,
      scan.source,
      scan.createdAt,
      scan.vehicle,
      scan.vehicle === null ? null : scan.vehicle.toLowerCase(),
      scan.position,
      scan.result.wear,
      JSON.stringify(scan.result),
      JSON.stringify(scan.image),
      scan.measurementMm,
      scan.measuredAt,
      scan.deletedAt,
      seq,
      vehicleKey(scan.vehicle),
      scan.editedAt,
      JSON.stringify(changesToJson(scan.changes)),
    ],
  );
  return rows.length === 1;
}

/** Writes every field a correction or a sync merge may change, under a new change sequence (the row is locked). */
async function updateMutable(tx: Queryable, scan: ScanRecord): Promise<void> {
  await tx.query(
    `UPDATE scans SET vehicle = $2, vehicle_folded = $3, vehicle_key = $4, position = $5, edited_at = $6, changes = $7,
       measurement_mm = $8, measured_at = $9, deleted_at = $10, change_seq = $11 WHERE id = $1`,
    [
      scan.id,
      scan.vehicle,
      scan.vehicle === null ? null : scan.vehicle.toLowerCase(),
      vehicleKey(scan.vehicle),
      scan.position,
      scan.editedAt,
      JSON.stringify(changesToJson(scan.changes)),
      scan.measurementMm,
      scan.measuredAt,
      scan.deletedAt,
      await nextSeq(tx),
    ],
  );
}

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
  return Buffer.from(`${scan.createdAt.getTime()}:${scan.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  const match = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || !inDateRange(Number(match[1]))) {
    throw new AppError('VALIDATION_ERROR', 'The cursor is not valid; start again from the first page');
  }
  return { at: new Date(Number(match[1])), id: match[2]! };
}

/** WHERE clause for the live scans of an account matching a filter. */
function where(filter: Omit<ScanFilter, 'cursor' | 'limit'>, params: unknown[]): string {
  params.push(filter.accountId);
  const clauses = [`account_id = $${params.length}`, 'deleted_at IS NULL'];
  if (filter.vehicle) {
    // strpos on JS-computed keys (or JS-folded text), as the SQLite store does: no LIKE escaping, one rule on both stores.
    const key = vehicleKey(filter.vehicle);
    params.push(key ?? filter.vehicle.toLowerCase());
    clauses.push(key === null ? `strpos(vehicle_folded, $${params.length}) > 0` : `strpos(vehicle_key, $${params.length}) > 0`);
  }
  if (filter.vehicleKey !== undefined) {
    params.push(filter.vehicleKey);
    clauses.push(`vehicle_key = $${params.length}`);
  }
  if (filter.hasVehicle !== undefined) clauses.push(filter.hasVehicle ? 'vehicle_key IS NOT NULL' : 'vehicle_key IS NULL');
  if (filter.wear) {
    // the band of the depth of record: the gauge reading's where there is one (wear-of-record.ts)
    params.push(filter.wear);
    clauses.push(`${WEAR_OF_RECORD_SQL} = $${params.length}`);
  }
  if (filter.apiKeyId !== undefined) {
    params.push(filter.apiKeyId);
    clauses.push(`api_key_id = $${params.length}`);
  }
  if (filter.measured) clauses.push('measurement_mm IS NOT NULL');
  if (filter.from) {
    params.push(filter.from);
    clauses.push(`created_at >= $${params.length}`);
  }
  if (filter.to) {
    params.push(filter.to);
    clauses.push(`created_at <= $${params.length}`);
  }
  return clauses.join(' AND ');
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
        const { at, id } = decodeCursor(filter.cursor);
        params.push(at, id);
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
    async imageKeysOf(ids) {
      const rows = await db.query<{ original: string; thumbnail: string }>(
        `SELECT image->>'originalKey' AS original, image->>'thumbnailKey' AS thumbnail
         FROM scans WHERE id = ANY($1::text[]) AND deleted_at IS NULL`,
        [[...ids]],
      );
      return rows.flatMap((row) => [row.original, row.thumbnail]);
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

/** As the SQLite store's: groups by plate key ('' for none, in byte order), then each group's newest scans. */
async function vehiclePage(db: Db, filter: VehicleFilter): Promise<VehiclePage> {
  const params: unknown[] = [];
  const sql = where(filter, params);
  const groupParams = [...params];
  let having = '';
  if (filter.cursor !== undefined) {
    const after = decodeVehicleCursor(filter.cursor);
    groupParams.push(new Date(after.lastMs), after.key);
    const [at, key] = [groupParams.length - 1, groupParams.length];
    having = `HAVING max(created_at) < $${at} OR (max(created_at) = $${at} AND COALESCE(vehicle_key, '') COLLATE "C" > $${key})`;
  }
  const limit = Math.max(1, Math.floor(filter.limit));
  groupParams.push(limit + 1);
  const groups = await db.query<{ k: string; n: string; last_at: Date; first_at: Date }>(
    `SELECT COALESCE(vehicle_key, '') COLLATE "C" AS k, count(*) AS n, max(created_at) AS last_at, min(created_at) AS first_at
     FROM scans WHERE ${sql} GROUP BY COALESCE(vehicle_key, '') COLLATE "C" ${having}
     ORDER BY last_at DESC, k ASC LIMIT $${groupParams.length}`,
    groupParams,
  );
  const page = groups.slice(0, limit);
  const rowParams = [...params, page.map((g) => g.k), Math.max(1, Math.floor(filter.scansPerVehicle))];
  const rows =
    page.length === 0
      ? []
      : await db.query<ScanRow>(
          `SELECT * FROM (
             SELECT *, row_number() OVER (PARTITION BY COALESCE(vehicle_key, '') ORDER BY created_at DESC, id DESC) AS rn
             FROM scans WHERE ${sql} AND COALESCE(vehicle_key, '') = ANY($${rowParams.length - 1}::text[])
           ) AS ranked WHERE rn <= $${rowParams.length} ORDER BY created_at DESC, id DESC`,
          rowParams,
        );
  const byKey = new Map<string, ScanRow[]>();
  for (const row of rows) {
    const k = row.vehicle_key ?? '';
    byKey.set(k, [...(byKey.get(k) ?? []), row]);
  }
  const last = page[page.length - 1];
  return {
    items: page.map((g) => ({
      vehicleKey: g.k === '' ? null : g.k,
      scanCount: num(g.n),
      lastScanAt: g.last_at,
      firstScanAt: g.first_at,
      scans: (byKey.get(g.k) ?? []).map(toScan),
    })),
    nextCursor: groups.length > limit && last ? encodeVehicleCursor({ lastMs: last.last_at.getTime(), key: last.k }) : null,
  };
}
