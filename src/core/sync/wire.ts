/**
 * The scan as a desktop pushes it to its hub, on the core's side: to and from the stored record,
 * and the hub's parse of a pushed `scan` field. Its schema and type are the contract's
 * (SyncScanSchema in src/shared/contract/sync.ts).
 */
import { Value } from '@sinclair/typebox/value';
import { AppError, isAppError, type ErrorCode } from '../errors.js';
import type { ScanRecord, StoredImageInfo } from '../types.js';
import { SyncScanSchema, type SyncScan } from '../../shared/contract/sync.js';
import { changesFromJson, changesToJson } from '../storage/scan-edit.js';

/**
 * Response header with which a hub marks a refusal that is about the pushed scan itself (its
 * data, its photo, its owner), so the desktop skips that scan rather than retrying it. Every
 * other refusal (the Host check, a proxy, a key) is a problem of the link and is retried.
 */
export const SCAN_REFUSAL_HEADER = 'x-tirewear-scan-refused';

/** An AppError about the pushed scan itself: the desktop skips the scan instead of retrying. */
export function scanRefusal(code: ErrorCode, message: string, cause?: unknown): AppError {
  return new AppError(code, message, { headers: { [SCAN_REFUSAL_HEADER]: '1' }, ...(cause === undefined ? {} : { cause }) });
}

/** Whether an error is a refusal about the scan itself (scanRefusal): the desk skips that change for good. */
export function isScanRefusal(error: unknown): boolean {
  return isAppError(error) && error.headers[SCAN_REFUSAL_HEADER] === '1';
}

export { SyncScanSchema, type SyncScan };

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toSyncScan(scan: ScanRecord): SyncScan {
  const { originalKey: _original, thumbnailKey: _thumbnail, ...image } = scan.image;
  return {
    scanId: scan.id,
    createdAt: scan.createdAt.toISOString(),
    vehicle: scan.vehicle,
    position: scan.position,
    result: scan.result,
    image,
    measurementMm: scan.measurementMm,
    measuredAt: iso(scan.measuredAt),
    deletedAt: iso(scan.deletedAt),
    editedAt: iso(scan.editedAt),
    changes: changesToJson(scan.changes) as NonNullable<SyncScan['changes']>,
  };
}

function date(value: string, field: string): Date {
  const parsed = new Date(value);
  if (Number.isNaN(parsed.getTime())) throw scanRefusal('VALIDATION_ERROR', `scan.${field} is not a valid date`);
  return parsed;
}

/** Parse the `scan` field of a sync upload; VALIDATION_ERROR names the first bad field. */
export function parseSyncScan(text: string): SyncScan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw scanRefusal('VALIDATION_ERROR', 'The scan field must be JSON');
  }
  const error = Value.Errors(SyncScanSchema, value).First();
  if (error) {
    throw scanRefusal('VALIDATION_ERROR', `scan${error.path.replace(/\//g, '.')}: ${error.message}`);
  }
  const scan = value as SyncScan;
  // as the analyze form's vehicle field: no control characters (a NUL breaks PostgreSQL's text)
  if (scan.vehicle !== null && /\p{Cc}/u.test(scan.vehicle)) {
    throw scanRefusal('VALIDATION_ERROR', 'scan.vehicle must not contain control characters');
  }
  date(scan.createdAt, 'createdAt');
  if (scan.measuredAt !== null) date(scan.measuredAt, 'measuredAt');
  if (scan.deletedAt !== null) date(scan.deletedAt, 'deletedAt');
  if (scan.editedAt !== undefined && scan.editedAt !== null) date(scan.editedAt, 'editedAt');
  scan.changes?.forEach((change, i) => {
    date(change.at, `changes.${i}.at`);
    for (const value of [change.from, change.to]) {
      if (typeof value === 'string' && /\p{Cc}/u.test(value)) {
        throw scanRefusal('VALIDATION_ERROR', `scan.changes.${i} must not contain control characters`);
      }
    }
  });
  return scan;
}

/** The hub's record of a pushed scan, filed under the pushing hub account and key. */
export function fromSyncScan(
  wire: SyncScan,
  owner: { accountId: string; apiKeyId: string | null },
  keys: Pick<StoredImageInfo, 'originalKey' | 'thumbnailKey'>,
): ScanRecord {
  return {
    id: wire.scanId,
    accountId: owner.accountId,
    apiKeyId: owner.apiKeyId,
    source: 'sync',
    createdAt: date(wire.createdAt, 'createdAt'),
    vehicle: wire.vehicle,
    position: wire.position,
    result: wire.result,
    // field by field: the wire may carry more (a newer desk, or a hostile one naming file keys), and
    // the file names are always the hub's own
    image: { mime: wire.image.mime, width: wire.image.width, height: wire.image.height, bytes: wire.image.bytes, sha256: wire.image.sha256, ...keys },
    measurementMm: wire.measurementMm,
    measuredAt: wire.measuredAt === null ? null : date(wire.measuredAt, 'measuredAt'),
    deletedAt: wire.deletedAt === null ? null : date(wire.deletedAt, 'deletedAt'),
    editedAt: wire.editedAt === undefined || wire.editedAt === null ? null : date(wire.editedAt, 'editedAt'),
    changes: changesFromJson(wire.changes ?? []).map((change) => ({ ...change, via: 'sync' as const })),
  };
}
