/**
 * The `scans` table's columns and how a ScanRecord maps onto them, for both stores. Each store
 * says only how it holds a time and a JSON value: SQLite epoch milliseconds and JSON text,
 * PostgreSQL a timestamptz and a jsonb the driver has parsed already.
 */
import { vehicleKey } from '../../shared/vehicle.js';
import type { ScanRecord, ScanResult, ScanSource, StoredImageInfo, TirePosition } from '../types.js';
import { changesFromJson, changesToJson } from './scan-edit.js';

/** A row as a store reads it, change_seq and the search columns aside. */
export interface ScanRowOf<Time, Json> {
  id: string;
  account_id: string | null;
  api_key_id: string | null;
  source: ScanSource;
  created_at: Time;
  vehicle: string | null;
  position: TirePosition | null;
  result: Json;
  image: Json;
  measurement_mm: number | null;
  measured_at: Time | null;
  deleted_at: Time | null;
  vehicle_key: string | null;
  edited_at: Time | null;
  changes: Json;
}

/** How one store turns its column values into a Date and a parsed JSON value. */
export interface ColumnReader<Time, Json> {
  time(value: Time): Date;
  json(value: Json): unknown;
}

export function scanFromRow<Time, Json>(row: ScanRowOf<Time, Json>, read: ColumnReader<Time, Json>): ScanRecord {
  const at = (value: Time | null) => (value === null ? null : read.time(value));
  return {
    id: row.id,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    source: row.source,
    createdAt: read.time(row.created_at),
    vehicle: row.vehicle,
    position: row.position,
    result: read.json(row.result) as ScanResult,
    image: read.json(row.image) as StoredImageInfo,
    measurementMm: row.measurement_mm,
    measuredAt: at(row.measured_at),
    deletedAt: at(row.deleted_at),
    editedAt: at(row.edited_at),
    changes: changesFromJson(read.json(row.changes)),
  };
}

/** JS case folding on both sides (stored column and needle) handles non-ASCII, unlike SQLite's lower(). */
export function foldVehicle(vehicle: string): string {
  return vehicle.toLowerCase();
}

/** Every column a scan writes but change_seq, in INSERT order. */
const WRITTEN = [
  'id',
  'account_id',
  'api_key_id',
  'source',
  'created_at',
  'vehicle',
  'vehicle_folded',
  'position',
  'wear',
  'result',
  'image',
  'measurement_mm',
  'measured_at',
  'deleted_at',
  'vehicle_key',
  'edited_at',
  'changes',
] as const;
type Column = (typeof WRITTEN)[number];

/** What a correction or a sync merge may change. */
const MUTABLE = [
  'vehicle',
  'vehicle_folded',
  'vehicle_key',
  'position',
  'edited_at',
  'changes',
  'measurement_mm',
  'measured_at',
  'deleted_at',
] as const satisfies readonly Column[];
type Mutable = (typeof MUTABLE)[number];

type Time = (date: Date | null) => unknown;

/** The mutable columns' values only: an UPDATE never writes the result or the image, so their JSON is not built. */
function mutableValues(scan: ScanRecord, time: Time): Record<Mutable, unknown> {
  return {
    vehicle: scan.vehicle,
    vehicle_folded: scan.vehicle === null ? null : foldVehicle(scan.vehicle),
    vehicle_key: vehicleKey(scan.vehicle),
    position: scan.position,
    edited_at: time(scan.editedAt),
    changes: JSON.stringify(changesToJson(scan.changes)),
    measurement_mm: scan.measurementMm,
    measured_at: time(scan.measuredAt),
    deleted_at: time(scan.deletedAt),
  };
}

function columnValues(scan: ScanRecord, time: Time): Record<Column, unknown> {
  return {
    ...mutableValues(scan, time),
    id: scan.id,
    account_id: scan.accountId,
    api_key_id: scan.apiKeyId,
    source: scan.source,
    created_at: time(scan.createdAt),
    wear: scan.result.wear,
    result: JSON.stringify(scan.result),
    image: JSON.stringify(scan.image),
  };
}

/** `placeholder(n)` is the store's n-th parameter (`?` or `$n`). */
type Placeholder = (n: number) => string;

/**
 * A store's two scan writes, built once per placeholder style (each store calls this once): the
 * INSERT of a whole scan and the UPDATE of every field a correction or a sync merge may change.
 * Their parameters come from insertValues and updateValues, in the same order.
 */
export interface ScanSql {
  insert: string;
  update: string;
}

export function scanSql(placeholder: Placeholder): ScanSql {
  const marks = [...WRITTEN, 'change_seq'].map((_, i) => placeholder(i + 1));
  const sets = [...MUTABLE, 'change_seq'].map((column, i) => `${column} = ${placeholder(i + 1)}`);
  return {
    insert: `INSERT INTO scans (${WRITTEN.join(', ')}, change_seq) VALUES (${marks.join(', ')})`,
    update: `UPDATE scans SET ${sets.join(', ')} WHERE id = ${placeholder(MUTABLE.length + 2)}`,
  };
}

/** ScanSql.insert's parameters: a whole scan under change sequence `seq`. */
export function insertValues(scan: ScanRecord, seq: number, time: Time): unknown[] {
  const values = columnValues(scan, time);
  return [...WRITTEN.map((column) => values[column]), seq];
}

/** ScanSql.update's parameters: the mutable fields under change sequence `seq`, then the id. */
export function updateValues(scan: ScanRecord, seq: number, time: Time): unknown[] {
  const values = mutableValues(scan, time);
  return [...MUTABLE.map((column) => values[column]), seq, scan.id];
}
