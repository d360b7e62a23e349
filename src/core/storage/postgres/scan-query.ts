/** The scan list's WHERE clause on PostgreSQL, and the vehicle list's page built on it. */
import { vehicleKey } from '../../../shared/vehicle.js';
import { decodeVehicleCursor } from '../cursor.js';
import { foldVehicle } from '../scan-columns.js';
import type { ScanFilter, VehicleFilter, VehiclePage } from '../store.js';
import { vehiclePageOf } from '../vehicle-page.js';
import { WEAR_OF_RECORD_SQL } from '../wear-of-record.js';
import { num, type Db } from './db.js';
import { type ScanRow, toScan } from './scan-rows.js';

/** WHERE clause for the live scans of an account matching a filter. */
export function where(filter: Omit<ScanFilter, 'cursor' | 'limit'>, params: unknown[]): string {
  params.push(filter.accountId);
  const clauses = [`account_id = $${params.length}`, 'deleted_at IS NULL'];
  if (filter.vehicle) {
    // strpos on JS-computed keys (or JS-folded text), as the SQLite store does: no LIKE escaping, one rule on both stores.
    const key = vehicleKey(filter.vehicle);
    params.push(key ?? foldVehicle(filter.vehicle));
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

/** As the SQLite store's: groups by plate key ('' for none, in byte order), then each group's newest scans. */
export async function vehiclePage(db: Db, filter: VehicleFilter): Promise<VehiclePage> {
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
  const groupRows = groups.map((g) => ({ key: g.k, count: num(g.n), lastAt: g.last_at, firstAt: g.first_at }));
  return vehiclePageOf(groupRows, limit, rows, toScan);
}
