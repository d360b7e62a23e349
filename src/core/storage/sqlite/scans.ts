/** Scan history: the charging commit, lookups, paging and the edits that feed the sync outbox. */
import type { ScanFilter, ScanStore } from '../store.js';
import { type Db, immediate, run, toMs } from './db.js';
import { createScanSync } from './scan-sync.js';
import {
  type ScanRow,
  decodeCursor,
  encodeCursor,
  foldVehicle,
  insertScan,
  nextSeq,
  readScan,
  scanFromRow,
} from './scan-rows.js';
import { createCharger } from './usage.js';

type Filter = Omit<ScanFilter, 'cursor' | 'limit'>;

/** WHERE clause shared by list and all: live scans of one account, plus the optional filters. */
function whereOf(filter: Filter): { sql: string; params: unknown[] } {
  const clauses = ['account_id = ?', 'deleted_at IS NULL'];
  const params: unknown[] = [filter.accountId];
  if (filter.vehicle !== undefined && filter.vehicle !== '') {
    // instr, not LIKE: a needle containing % or _ matches literally with no escaping to get wrong.
    clauses.push('instr(vehicle_folded, ?) > 0');
    params.push(foldVehicle(filter.vehicle));
  }
  if (filter.wear !== undefined) {
    clauses.push('wear = ?');
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
  const completeIdempotency = db.prepare('UPDATE idempotency SET response = ? WHERE caller_key = ? AND key = ?');
  const markDeleted = db.prepare(
    'UPDATE scans SET deleted_at = ?, change_seq = ? WHERE id = ? AND deleted_at IS NULL',
  );
  // One JSON array parameter, not a placeholder per id: any batch size fits SQLite's parameter limit.
  const imageKeysOf = db.prepare(
    `SELECT json_extract(image, '$.originalKey') AS original, json_extract(image, '$.thumbnailKey') AS thumbnail
     FROM scans WHERE id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL`,
  );
  const setMeasurement = db.prepare(
    'UPDATE scans SET measurement_mm = ?, measured_at = ?, change_seq = ? WHERE id = ? AND deleted_at IS NULL',
  );

  return {
    commit: (input) =>
      immediate(db, () => {
        if (input.reservation !== null) charge(input.reservation.id);
        insertScan(db, input.scan);
        if (input.idempotency !== null) {
          const { callerKey, key, response } = input.idempotency;
          completeIdempotency.run(JSON.stringify(response), callerKey, key);
        }
      }),
    get: (id) => run(() => readScan(db, id)),
    list: (filter) =>
      run(() => {
        const where = whereOf(filter);
        let sql = where.sql;
        const params = [...where.params];
        if (filter.cursor !== undefined) {
          const after = decodeCursor(filter.cursor);
          sql += ' AND (created_at < ? OR (created_at = ? AND id < ?))';
          params.push(after.createdAtMs, after.createdAtMs, after.id);
        }
        const limit = Math.max(1, Math.floor(filter.limit));
        const rows = db
          .prepare(`SELECT * FROM scans WHERE ${sql} ORDER BY created_at DESC, id DESC LIMIT ?`)
          .all(...params, limit + 1) as ScanRow[];
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        return {
          items: page.map(scanFromRow),
          nextCursor: rows.length > limit && last ? encodeCursor({ createdAtMs: last.created_at, id: last.id }) : null,
        };
      }),
    all: (filter) =>
      run(() => {
        const where = whereOf(filter);
        const rows = db
          .prepare(`SELECT * FROM scans WHERE ${where.sql} ORDER BY created_at ASC, id ASC`)
          .all(...where.params) as ScanRow[];
        return rows.map(scanFromRow);
      }),
    markDeleted: (id, at) => immediate(db, () => markDeleted.run(toMs(at), nextSeq(db), id).changes > 0),
    setMeasurement: (id, measurementMm, at) =>
      immediate(db, () => setMeasurement.run(measurementMm, toMs(at), nextSeq(db), id).changes > 0),
    imageKeysOf: (ids) =>
      run(() =>
        (imageKeysOf.all(JSON.stringify(ids)) as Array<{ original: string; thumbnail: string }>).flatMap((row) => [
          row.original,
          row.thumbnail,
        ]),
      ),
    ...createScanSync(db),
  };
}
