/**
 * What both stores' page cursors and the scan filters' dates must be. A cursor's text is the
 * time in ms and a scan id, nothing else: anything more (a NUL, spaces, a time no timestamp
 * holds) is refused as VALIDATION_ERROR before it reaches a query, on SQLite as on PostgreSQL.
 */
import { AppError } from '../errors.js';

export const CURSOR_TEXT = /^(-?\d{1,16}):([A-Za-z0-9_-]{1,64})$/;

const FIRST_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const LAST_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** Times a cursor or a filter may name: years 1 to 9999 (PostgreSQL's timestamps and JavaScript's dates both hold them). */
export function inDateRange(ms: number): boolean {
  return ms >= FIRST_MS && ms <= LAST_MS;
}

/** Position in the newest-first scan list: (createdAt, id) is unique, so inserts never shift a page boundary. */
export interface ScanCursor {
  createdAtMs: number;
  id: string;
}

export function encodeScanCursor(position: ScanCursor): string {
  return Buffer.from(`${position.createdAtMs}:${position.id}`, 'utf8').toString('base64url');
}

export function decodeScanCursor(cursor: string): ScanCursor {
  const match = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || !inDateRange(Number(match[1]))) {
    throw new AppError('VALIDATION_ERROR', 'The cursor is not valid; start again from the first page');
  }
  return { createdAtMs: Number(match[1]), id: match[2]! };
}

/**
 * The vehicle list's position: the last group's newest scan time and its sort key (the plate
 * key, '' for the group without one). base64url of JSON, checked as strictly as the scan cursor.
 */
export interface VehicleCursor {
  lastMs: number;
  key: string;
}

const PLATE_KEY_TEXT = /^[\p{L}\p{M}\p{N}]{0,1024}$/u;

export function encodeVehicleCursor(cursor: VehicleCursor): string {
  return Buffer.from(JSON.stringify([cursor.lastMs, cursor.key]), 'utf8').toString('base64url');
}

export function decodeVehicleCursor(text: string): VehicleCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    value = null;
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    !inDateRange(value[0] as number) ||
    typeof value[1] !== 'string' ||
    !PLATE_KEY_TEXT.test(value[1])
  ) {
    throw new AppError('VALIDATION_ERROR', 'The cursor is not valid; start again from the first page');
  }
  return { lastMs: value[0] as number, key: value[1] };
}
