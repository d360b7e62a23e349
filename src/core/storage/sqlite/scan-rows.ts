/** Mapping between ScanRecord and the `scans` table, and the list cursor. */
import { CURSOR_TEXT, inDateRange } from '../cursor.js';
import { AppError } from '../../errors.js';
import type { ScanRecord } from '../../types.js';
import { vehicleKey } from '../../../shared/vehicle.js';
import { changesFromJson, changesToJson } from '../scan-edit.js';
import { type Db, fromMs, toMs } from './db.js';

export interface ScanRow {
  id: string;
  account_id: string | null;
  api_key_id: string | null;
  source: ScanRecord['source'];
  created_at: number;
  vehicle: string | null;
  vehicle_folded: string | null;
  position: ScanRecord['position'];
  wear: string;
  result: string;
  image: string;
  measurement_mm: number | null;
  measured_at: number | null;
  deleted_at: number | null;
  change_seq: number;
  vehicle_key: string | null;
  edited_at: number | null;
  changes: string;
}

export function scanFromRow(row: ScanRow): ScanRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    source: row.source,
    createdAt: fromMs(row.created_at),
    vehicle: row.vehicle,
    position: row.position,
    result: JSON.parse(row.result) as ScanRecord['result'],
    image: JSON.parse(row.image) as ScanRecord['image'],
    measurementMm: row.measurement_mm,
    measuredAt: fromMs(row.measured_at),
    deletedAt: fromMs(row.deleted_at),
    editedAt: fromMs(row.edited_at),
    changes: changesFromJson(JSON.parse(row.changes)),
  };
}

/** JS case folding on both sides (stored column and needle) handles non-ASCII, unlike SQLite's lower(). */
export function foldVehicle(vehicle: string): string {
  return vehicle.toLowerCase();
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
  db.prepare(
    `INSERT INTO scans (id, account_id, api_key_id, source, created_at, vehicle, vehicle_folded, position, wear,
       result, image, measurement_mm, measured_at, deleted_at, change_seq, vehicle_key, edited_at, changes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    scan.id,
    scan.accountId,
    scan.apiKeyId,
    scan.source,
    toMs(scan.createdAt),
    scan.vehicle,
    scan.vehicle === null ? null : foldVehicle(scan.vehicle),
    scan.position,
    scan.result.wear,
    JSON.stringify(scan.result),
    JSON.stringify(scan.image),
    scan.measurementMm,
    toMs(scan.measuredAt),
    toMs(scan.deletedAt),
    nextSeq(db),
    vehicleKey(scan.vehicle),
    toMs(scan.editedAt),
    JSON.stringify(changesToJson(scan.changes)),
  );
}

/** Writes every field a correction or a sync merge may change, under a new change sequence. */
export function updateMutable(db: Db, scan: ScanRecord): void {
  db.prepare(
    `UPDATE scans SET vehicle = ?, vehicle_folded = ?, vehicle_key = ?, position = ?, edited_at = ?, changes = ?,
       measurement_mm = ?, measured_at = ?, deleted_at = ?, change_seq = ? WHERE id = ?`,
  ).run(
    scan.vehicle,
    scan.vehicle === null ? null : foldVehicle(scan.vehicle),
    vehicleKey(scan.vehicle),
    scan.position,
    toMs(scan.editedAt),
    JSON.stringify(changesToJson(scan.changes)),
    scan.measurementMm,
    toMs(scan.measuredAt),
    toMs(scan.deletedAt),
    nextSeq(db),
    scan.id,
  );
}

export function readScan(db: Db, id: string): ScanRecord | null {
  const row = db.prepare('SELECT * FROM scans WHERE id = ?').get(id) as ScanRow | undefined;
  return row ? scanFromRow(row) : null;
}

/** Position in the newest-first order: (createdAt, id) is unique, so inserts never shift a page boundary. */
export interface CursorPosition {
  createdAtMs: number;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(`${position.createdAtMs}:${position.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = CURSOR_TEXT.exec(text);
  if (!match || !inDateRange(Number(match[1]))) {
    throw new AppError('VALIDATION_ERROR', 'The cursor is not valid; start again from the first page');
  }
  return { createdAtMs: Number(match[1]), id: match[2]! };
}
