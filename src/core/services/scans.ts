/**
 * The scan service: analyze (see analyze.ts) plus history, images, gauge readings and
 * CSV export. Visibility (SPEC §5): an account's scan only to that account (FORBIDDEN to
 * anyone else); an anonymous scan to whoever holds its unguessable id; deleted is NOT_FOUND.
 */
import { inDateRange } from '../storage/cursor.js';
import { MAX_TREAD_DEPTH_MM, WEAR_CLASSES } from '../analysis/analyzer.js';
import { AppError } from '../errors.js';
import type { ScanFilter, Store } from '../storage/store.js';
import type { ApiKeyRecord, Caller, ScanRecord } from '../types.js';
import { analyzeScan, type AnalyzeDeps } from './analyze.js';
import { scansToCsv } from './csv.js';
import type { ScanQuery, ScanService } from './ports.js';

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
export const MAX_MEASUREMENT_MM = MAX_TREAD_DEPTH_MM;

function notFound(): AppError {
  return new AppError('NOT_FOUND', 'No such scan.');
}

/** What PUT /scans/:id/measurement accepts, for every message that refuses a reading. */
export const MEASUREMENT_RULE = `measurementMm must be a JSON number of mm from 0 to ${MAX_MEASUREMENT_MM} with at most 2 decimals, or null to clear the reading.`;

/** A gauge reading as sent: only a real number in range (no strings, booleans or arrays), or null. */
export function checkMeasurement(mm: unknown): number | null {
  if (mm === null) return null;
  const ok =
    typeof mm === 'number' &&
    Number.isFinite(mm) &&
    mm >= 0 &&
    mm <= MAX_MEASUREMENT_MM &&
    Math.abs(mm * 100 - Math.round(mm * 100)) < 1e-6;
  if (!ok) throw new AppError('VALIDATION_ERROR', MEASUREMENT_RULE);
  return Math.round(mm * 100) / 100;
}

/**
 * A scan as callers see it: a cleared reading has no time either. The store keeps the time of
 * the clear in measuredAt (ScanStore.setMeasurement) because sync needs it: a clear made on a
 * desktop must win the hub's last-writer-wins merge over the reading it removes.
 */
export function presentScan(scan: ScanRecord): ScanRecord {
  return scan.measurementMm === null && scan.measuredAt !== null ? { ...scan, measuredAt: null } : scan;
}

function checkFilter(query: Omit<ScanQuery, 'cursor' | 'limit'>): Omit<ScanFilter, 'accountId' | 'cursor' | 'limit'> {
  if (query.wear !== undefined && !(WEAR_CLASSES as readonly string[]).includes(query.wear)) {
    throw new AppError('VALIDATION_ERROR', `wear must be one of ${WEAR_CLASSES.join(', ')}.`);
  }
  for (const [name, value] of [['from', query.from], ['to', query.to]] as const) {
    if (value !== undefined && (!(value instanceof Date) || !inDateRange(value.getTime()))) {
      throw new AppError('VALIDATION_ERROR', `${name} must be a valid date from year 1 to 9999.`);
    }
  }
  if (query.vehicle !== undefined && /\p{Cc}/u.test(query.vehicle)) {
    throw new AppError('VALIDATION_ERROR', 'vehicle must not contain control characters.');
  }
  const filter: Omit<ScanFilter, 'accountId' | 'cursor' | 'limit'> = {};
  if (query.vehicle !== undefined && query.vehicle.trim()) filter.vehicle = query.vehicle.trim();
  if (query.wear !== undefined) filter.wear = query.wear;
  if (query.from !== undefined) filter.from = query.from;
  if (query.to !== undefined) filter.to = query.to;
  return filter;
}

function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new AppError('VALIDATION_ERROR', `limit must be an integer from 1 to ${MAX_PAGE}.`);
  }
  return limit;
}

/**
 * The shop a synced scan belongs to (the hub API key that first pushed it), when that is a live key
 * other than `callerKeyId`; null when the caller is that shop, or its key is revoked or gone (a
 * shop that replaced its key: another key of the account carries its scans on). The one rule
 * behind PUT /sync/scans (sync/receive.ts) and the scan routes' changes on a hub.
 */
export async function otherLiveShop(
  store: Pick<Store, 'apiKeys'>,
  accountId: string,
  scanKeyId: string,
  callerKeyId: string | null,
): Promise<ApiKeyRecord | null> {
  if (scanKeyId === callerKeyId) return null;
  const [shop] = await store.apiKeys.findByIds(accountId, [scanKeyId]);
  return shop && shop.revokedAt === null ? shop : null;
}

export function createScanService(deps: AnalyzeDeps): ScanService {
  const { store, images, clock, metering } = deps;

  /** The stored record (measuredAt as sync needs it); callers get presentScan() of it. */
  async function visibleScan(caller: Caller, scanId: string): Promise<ScanRecord> {
    if (typeof scanId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(scanId)) throw notFound();
    const scan = await store.scans.get(scanId);
    if (!scan || scan.deletedAt) throw notFound();
    if (scan.accountId === null) return scan;
    if (caller.kind === 'account' && caller.account.id === scan.accountId) return scan;
    // without credentials the caller may well be its owner who forgot the key: say what is missing
    if (caller.kind === 'anonymous') throw new AppError('INVALID_SESSION', 'This scan belongs to an account: sign in, or send its X-API-Key header, to read it.');
    throw new AppError('FORBIDDEN', 'This scan belongs to another account.');
  }

  /**
   * A scan the caller may change or delete. On a hub a scan synced from a shop is that shop's
   * (docs/HUB.md): another shop's key may read it but not change it, as PUT /sync/scans refuses;
   * the chain office, signed in, may. A shop whose key was revoked leaves its scans to the others.
   */
  async function changeableScan(caller: Caller, scanId: string): Promise<ScanRecord> {
    const scan = await visibleScan(caller, scanId);
    if (scan.source !== 'sync' || scan.apiKeyId === null || caller.kind !== 'account' || caller.via !== 'key') return scan;
    const shop = await otherLiveShop(store, caller.account.id, scan.apiKeyId, caller.apiKeyId);
    if (!shop) return scan;
    throw new AppError(
      'FORBIDDEN',
      `This scan was synced from another shop of this hub account ("${shop.name}"), which alone may change or delete it; the chain office may, signed in.`,
    );
  }

  return {
    analyze: (command) => analyzeScan(deps, command),

    rateLimit: (caller) => metering.state(caller, clock.now()),

    refusalBeforeUpload: (caller) => metering.spentRefusal(caller, clock.now()),

    get: async (caller, scanId) => presentScan(await visibleScan(caller, scanId)),

    async list(caller, query) {
      const limit = checkLimit(query.limit);
      const filter: ScanFilter = { accountId: caller.account.id, ...checkFilter(query), limit };
      if (query.cursor !== undefined) filter.cursor = query.cursor;
      const page = await store.scans.list(filter);
      return { ...page, items: page.items.map(presentScan) };
    },

    async image(caller, scanId, variant) {
      const scan = await visibleScan(caller, scanId);
      if (variant === 'thumbnail') return { mime: 'image/jpeg', data: await images.get(scan.image.thumbnailKey) };
      return { mime: scan.image.mime, data: await images.get(scan.image.originalKey) };
    },

    async delete(caller, scanId) {
      const scan = await changeableScan(caller, scanId);
      if (!(await store.scans.markDeleted(scan.id, clock.now()))) throw notFound();
      // The record stays as a sync tombstone; the photos are the customer's data and go now.
      const removed = await Promise.allSettled([images.delete(scan.image.originalKey), images.delete(scan.image.thumbnailKey)]);
      const failed = removed.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        // the scan is gone for the caller; the files go at a later start (the leftover sweep)
        deps.logger.warn({ err: failed.reason, scanId: scan.id }, "a deleted scan's photo could not be removed; the next start retries");
      }
    },

    async setMeasurement(caller, scanId, measurementMm) {
      const value = checkMeasurement(measurementMm);
      const scan = await changeableScan(caller, scanId);
      if (!(await store.scans.setMeasurement(scan.id, value, clock.now()))) throw notFound();
      const updated = await store.scans.get(scan.id);
      if (!updated || updated.deletedAt) throw notFound();
      return presentScan(updated);
    },

    async exportCsv(caller, query, format = 'csv') {
      return scansToCsv((await store.scans.all({ accountId: caller.account.id, ...checkFilter(query) })).map(presentScan), format);
    },
  };
}
