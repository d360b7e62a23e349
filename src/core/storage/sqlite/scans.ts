/** Scan history: the charging commit, lookups, paging and the edits that feed the sync outbox. */
import { vehicleKey } from '../../../shared/vehicle.js';
import { decodeScanCursor, decodeVehicleCursor, encodeScanCursor } from '../cursor.js';
import { foldVehicle } from '../scan-columns.js';
import { applyEdit } from '../scan-edit.js';
import type { ScanFilter, ScanStore, VehicleFilter, VehiclePage } from '../store.js';
import { vehiclePageOf } from '../vehicle-page.js';
import { WEAR_OF_RECORD_SQL } from '../wear-of-record.js';
import { type Db, fromMs, immediate, run, toMs } from './db.js';
import { createScanSync } from './scan-sync.js';
import { type ScanRow, createScanRows, scanFromRow } from './scan-rows.js';
import { createCharger } from './usage.js';

type Filter = Omit<ScanFilter, 'cursor' | 'limit'>;

/** WHERE clause shared by list, all and vehicles: live scans of one account, plus the optional filters. */
function whereOf(filter: Filter): { sql: string; params: unknown[] } {
  const clauses = ['account_id = ?', 'deleted_at IS NULL'];
  const params: unknown[] = [filter.accountId];
  if (filter.vehicle !== undefined && filter.vehicle !== '') {
    // instr, not LIKE: a needle containing % or _ matches literally with no escaping to get wrong.
    const key = vehicleKey(filter.vehicle);
    clauses.push(key === null ? 'instr(vehicle_folded, ?) > 0' : 'instr(vehicle_key, ?) > 0');
    params.push(key ?? foldVehicle(filter.vehicle));
  }
  if (filter.vehicleKey !== undefined) {
    clauses.push('vehicle_key = ?');
    params.push(filter.vehicleKey);
  }
  if (filter.hasVehicle !== undefined) clauses.push(filter.hasVehicle ? 'vehicle_key IS NOT NULL' : 'vehicle_key IS NULL');
  if (filter.wear !== undefined) {
    // the band of the depth of record: the gauge reading's where there is one (wear-of-record.ts)
    clauses.push(`${WEAR_OF_RECORD_SQL} = ?`);
    params.push(filter.wear);
  }
  if (filter.apiKeyId !== undefined) {
    clauses.push('api_key_id = ?');
    params.push(filter.apiKeyId);
  }
  if (filter.measured) clauses.push('measurement_mm IS NOT NULL');
  if (filter.from !== undefined) {
    clauses.push('created_at >= ?');
    params.push(toMs(filter.from));
  }
  if (filter.to !== undefined) {
    clauses.push('created_at <= ?');
    params.push(toMs(filter.to));
  }
  return { sql: clauses.join(' AND '), params };
}

export function createScanStore(db: Db): ScanStore {
  const charge = createCharger(db);
  const table = createScanRows(db);
  const completeIdempotency = db.prepare('UPDATE idempotency SET response = ? WHERE caller_key = ? AND key = ?');
  const markDeleted = db.prepare('UPDATE scans SET deleted_at = ?, change_seq = ? WHERE id = ? AND deleted_at IS NULL');
  // One JSON array parameter, not a placeholder per id: any batch size fits SQLite's parameter limit.
  const imageKeysOf = db.prepare(
    `SELECT json_extract(image, '$.originalKey') AS original, json_extract(image, '$.thumbnailKey') AS thumbnail
     FROM scans WHERE id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL`,
  );
  const setMeasurement = db.prepare('UPDATE scans SET measurement_mm = ?, measured_at = ?, change_seq = ? WHERE id = ? AND deleted_at IS NULL');

  return {
    commit: (input) =>
      immediate(db, () => {
        if (input.reservation !== null) charge(input.reservation.id);
        table.insert(input.scan);
        if (input.idempotency !== null) {
          const { callerKey, key, response } = input.idempotency;
          completeIdempotency.run(JSON.stringify(response), callerKey, key);
        }
      }),
    get: (id) => run(() => table.read(id)),
    list: (filter) =>
      run(() => {
        const where = whereOf(filter);
        let sql = where.sql;
        const params = [...where.params];
        if (filter.cursor !== undefined) {
          const after = decodeScanCursor(filter.cursor);
          sql += ' AND (created_at < ? OR (created_at = ? AND id < ?))';
          params.push(after.createdAtMs, after.createdAtMs, after.id);
        }
        const limit = Math.max(1, Math.floor(filter.limit));
        const rows = db.prepare(`SELECT * FROM scans WHERE ${sql} ORDER BY created_at DESC, id DESC LIMIT ?`).all(...params, limit + 1) as ScanRow[];
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        return {
          items: page.map(scanFromRow),
          nextCursor: rows.length > limit && last ? encodeScanCursor({ createdAtMs: last.created_at, id: last.id }) : null,
        };
      }),
    all: (filter) =>
      run(() => {
        const where = whereOf(filter);
        const rows = db.prepare(`SELECT * FROM scans WHERE ${where.sql} ORDER BY created_at ASC, id ASC`).all(...where.params) as ScanRow[];
        return rows.map(scanFromRow);
      }),
    markDeleted: (id, at) => immediate(db, () => markDeleted.run(toMs(at), table.nextSeq(), id).changes > 0),
    setMeasurement: (id, measurementMm, at) => immediate(db, () => setMeasurement.run(measurementMm, toMs(at), table.nextSeq(), id).changes > 0),
    edit: (id, edit, meta) =>
      immediate(db, () => {
        const stored = table.read(id);
        if (!stored || stored.deletedAt) return null;
        const next = applyEdit(stored, edit, meta);
        if (next === null) return stored;
        table.updateMutable(next);
        return table.read(id);
      }),
    vehicles: (filter) => run(() => vehiclePage(db, filter)),
    imageKeysOf: (ids) =>
      run(() => (imageKeysOf.all(JSON.stringify(ids)) as Array<{ original: string; thumbnail: string }>).flatMap((row) => [row.original, row.thumbnail])),
    ...createScanSync(db, table),
  };
}

/**
 * Groups by plate key ('' stands for no key in the order and the cursor: no real key is empty),
 * newest last scan first, then each page's groups' newest scans in one windowed query.
 */
function vehiclePage(db: Db, filter: VehicleFilter): VehiclePage {
  const where = whereOf(filter);
  const params: unknown[] = [...where.params];
  let having = '';
  if (filter.cursor !== undefined) {
    const after = decodeVehicleCursor(filter.cursor);
    having = 'HAVING MAX(created_at) < ? OR (MAX(created_at) = ? AND k > ?)';
    params.push(after.lastMs, after.lastMs, after.key);
  }
  const limit = Math.max(1, Math.floor(filter.limit));
  const groups = db
    .prepare(
      `SELECT COALESCE(vehicle_key, '') AS k, COUNT(*) AS n, MAX(created_at) AS last_at, MIN(created_at) AS first_at
       FROM scans WHERE ${where.sql} GROUP BY k ${having} ORDER BY last_at DESC, k ASC LIMIT ?`,
    )
    .all(...params, limit + 1) as Array<{ k: string; n: number; last_at: number; first_at: number }>;
  const page = groups.slice(0, limit);
  const perGroup = Math.max(1, Math.floor(filter.scansPerVehicle));
  const rows =
    page.length === 0
      ? []
      : (db
          .prepare(
            `SELECT * FROM (
               SELECT *, ROW_NUMBER() OVER (PARTITION BY COALESCE(vehicle_key, '') ORDER BY created_at DESC, id DESC) AS rn
               FROM scans WHERE ${where.sql} AND COALESCE(vehicle_key, '') IN (SELECT value FROM json_each(?))
             ) WHERE rn <= ? ORDER BY created_at DESC, id DESC`,
          )
          .all(...where.params, JSON.stringify(page.map((g) => g.k)), perGroup) as ScanRow[]);
  const groupRows = groups.map((g) => ({ key: g.k, count: g.n, lastAt: fromMs(g.last_at), firstAt: fromMs(g.first_at) }));
  return vehiclePageOf(groupRows, limit, rows, scanFromRow);
}
