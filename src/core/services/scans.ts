/**
 * The scan service: analyze (see analyze.ts) plus history, images, gauge readings and
 * CSV export. Visibility (docs/API.md §5): an account's scan only to that account (FORBIDDEN to
 * anyone else); an anonymous scan to whoever holds its unguessable id; deleted is NOT_FOUND.
 */
import { inDateRange } from '../storage/cursor.js';
import { WEAR_CLASSES } from '../analysis/analyzer.js';
import { MAX_MEASUREMENT_MM } from '../../shared/contract/common.js';
import {
  DEFAULT_PAGE,
  DEFAULT_SCANS_PER_VEHICLE,
  DEFAULT_VEHICLE_PAGE,
  MAX_PAGE,
  MAX_SCANS_PER_VEHICLE,
  MAX_VEHICLE_PAGE,
} from '../../shared/contract/queries.js';
import { AppError, isAppError } from '../errors.js';
import { checkImageHeader, decodeFrame } from '../images/inspect.js';
import type { ScanEdit } from '../storage/scan-edit.js';
import type { ScanFilter, Store } from '../storage/store.js';
import type { ApiKeyRecord, Caller, ScanChangeVia, ScanRecord } from '../types.js';
import { vehicleKey } from '../../shared/vehicle.js';
import { analyzeScan, checkPosition, checkVehicle, type AnalyzeDeps } from './analyze.js';
import { perMinuteLimit } from './support/caller-limit.js';
import { scansToCsv } from './support/csv.js';
import type { ScanPatch, ScanQuery, ScanService } from './ports.js';

/** Page sizes: the contract's, as the query schemas document them (src/shared/contract/queries.ts). */
export { DEFAULT_PAGE, MAX_PAGE, DEFAULT_VEHICLE_PAGE, MAX_VEHICLE_PAGE, DEFAULT_SCANS_PER_VEHICLE, MAX_SCANS_PER_VEHICLE };
/**
 * GET /scans/:id/overlays a caller may ask in a minute. Each is a whole analysis of the stored photo
 * (the cost of a scan, free): a person opens a few scans a minute and asks each once (the History
 * card keeps them), so this leaves room for that and stops a loop from keeping the processor busy.
 */
export const OVERLAYS_PER_MINUTE = 30;
/** The fields PATCH /scans/:id corrects. */
export const PATCH_FIELDS = ['vehicle', 'position', 'measurementMm'] as const;
/** The contract's bound, the same for PUT /measurement, PATCH and the sync wire (docs/API.md §9, item 9). */
export { MAX_MEASUREMENT_MM };

function notFound(): AppError {
  return new AppError('NOT_FOUND', 'No such scan.');
}

/** What PUT /scans/:id/measurement accepts, for every message that refuses a reading. */
export const MEASUREMENT_RULE = `measurementMm must be a JSON number of mm from 0 to ${MAX_MEASUREMENT_MM} with at most 2 decimals, or null to clear the reading.`;

/** A gauge reading as sent: only a real number in range (no strings, booleans or arrays), or null. */
export function checkMeasurement(mm: unknown): number | null {
  if (mm === null) return null;
  const ok = typeof mm === 'number' && Number.isFinite(mm) && mm >= 0 && mm <= MAX_MEASUREMENT_MM && Math.abs(mm * 100 - Math.round(mm * 100)) < 1e-6;
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

/**
 * A correction as sent (PATCH /scans/:id), checked field by field as on creation: vehicle as the
 * analyze form's (trimmed, at most 64 printable characters; empty or null clears), position one of
 * FL FR RL RR SPARE in any case (empty or null clears), measurementMm as PUT /measurement. Nothing
 * is coerced: a number for the vehicle or a string for the reading is refused.
 */
export function checkPatch(patch: unknown): ScanEdit {
  const rule = `send a JSON object with at least one of ${PATCH_FIELDS.join(', ')}`;
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new AppError('VALIDATION_ERROR', `The body must be a JSON object: ${rule}.`);
  }
  const body = patch as Record<string, unknown>;
  const unknown = Object.keys(body).find((name) => !(PATCH_FIELDS as readonly string[]).includes(name));
  if (unknown !== undefined) {
    throw new AppError('VALIDATION_ERROR', `Field ${unknown.slice(0, 40)} cannot be changed; ${rule}.`);
  }
  const edit: ScanEdit = {};
  if ('vehicle' in body) {
    if (body.vehicle !== null && typeof body.vehicle !== 'string') {
      throw new AppError('VALIDATION_ERROR', "vehicle must be text (the plate or the customer's name for the car), or null to clear it.");
    }
    edit.vehicle = checkVehicle(body.vehicle);
  }
  if ('position' in body) {
    if (body.position !== null && typeof body.position !== 'string') {
      throw new AppError('VALIDATION_ERROR', 'position must be one of FL, FR, RL, RR, SPARE, or null to clear it.');
    }
    edit.position = checkPosition(body.position === null ? null : body.position.trim().toUpperCase());
  }
  if ('measurementMm' in body) edit.measurementMm = checkMeasurement(body.measurementMm);
  if (Object.keys(edit).length === 0) throw new AppError('VALIDATION_ERROR', `Nothing to change: ${rule}.`);
  return edit;
}

function viaOf(caller: Caller): ScanChangeVia {
  return caller.kind === 'account' ? caller.via : 'anonymous';
}

function checkFilter(query: Omit<ScanQuery, 'cursor' | 'limit'>): Omit<ScanFilter, 'accountId' | 'cursor' | 'limit'> {
  if (query.wear !== undefined && !(WEAR_CLASSES as readonly string[]).includes(query.wear)) {
    throw new AppError('VALIDATION_ERROR', `wear must be one of ${WEAR_CLASSES.join(', ')}.`);
  }
  for (const [name, value] of [
    ['from', query.from],
    ['to', query.to],
  ] as const) {
    if (value !== undefined && (!(value instanceof Date) || !inDateRange(value.getTime()))) {
      throw new AppError('VALIDATION_ERROR', `${name} must be a valid date from year 1 to 9999.`);
    }
  }
  for (const [name, value] of [
    ['vehicle', query.vehicle],
    ['vehicleKey', query.vehicleKey],
  ] as const) {
    if (value !== undefined && typeof value !== 'string') throw new AppError('VALIDATION_ERROR', `${name} must be text.`);
    if (value !== undefined && /\p{Cc}/u.test(value)) throw new AppError('VALIDATION_ERROR', `${name} must not contain control characters.`);
  }
  if (query.vehicleKey !== undefined && query.vehicle !== undefined) {
    throw new AppError('VALIDATION_ERROR', 'Send either vehicle (a search) or vehicleKey (one vehicle), not both.');
  }
  const filter: Omit<ScanFilter, 'accountId' | 'cursor' | 'limit'> = {};
  if (query.vehicle !== undefined && query.vehicle.trim()) filter.vehicle = query.vehicle.trim();
  if (query.vehicleKey !== undefined) {
    const key = vehicleKey(query.vehicleKey);
    if (key === null) throw new AppError('VALIDATION_ERROR', 'vehicleKey must hold a letter or a digit (for scans without a vehicle send hasVehicle=false).');
    filter.vehicleKey = key;
  }
  if (query.hasVehicle !== undefined) filter.hasVehicle = query.hasVehicle;
  if (query.wear !== undefined) filter.wear = query.wear;
  if (query.from !== undefined) filter.from = query.from;
  if (query.to !== undefined) filter.to = query.to;
  return filter;
}

function checkLimit(limit: number | undefined, name = 'limit', fallback = DEFAULT_PAGE, max = MAX_PAGE): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new AppError('VALIDATION_ERROR', `${name} must be an integer from 1 to ${max}.`);
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

/** The analyzer's refusals of a photo: the models in use cannot read it (not a fault of the request). */
const UNREADABLE_BY_MODEL = new Set(['NO_TIRE_DETECTED', 'TREAD_NOT_VISIBLE']);

export function createScanService(deps: AnalyzeDeps): ScanService {
  const { store, images, clock, metering } = deps;
  const overlayLimit = perMinuteLimit(OVERLAYS_PER_MINUTE, 'overlay requests');

  /** The stored record (measuredAt as sync needs it); callers get presentScan() of it. */
  async function visibleScan(caller: Caller, scanId: string): Promise<ScanRecord> {
    if (typeof scanId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(scanId)) throw notFound();
    const scan = await store.scans.get(scanId);
    if (!scan || scan.deletedAt) throw notFound();
    if (scan.accountId === null) return scan;
    if (caller.kind === 'account' && caller.account.id === scan.accountId) return scan;
    // without credentials the caller may well be its owner who forgot the key: say what is missing
    // (a staff screen may show this: no HTTP header named; a POS reads the code)
    if (caller.kind === 'anonymous')
      throw new AppError('INVALID_SESSION', "This scan belongs to a shop account: sign in (or use the shop's API key) to see it.");
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

    async overlays(caller, scanId) {
      overlayLimit(caller, clock.now().getTime());
      const scan = await visibleScan(caller, scanId);
      const photo = await images.get(scan.image.originalKey).catch((error: unknown) => {
        if (isAppError(error) && error.code === 'NOT_FOUND') {
          throw new AppError('NOT_FOUND', 'The photo of this scan is no longer stored, so its overlays cannot be made.');
        }
        throw error;
      });
      // a whole analysis, in the analyses' queue (SERVER_BUSY when full) as a scan's; nothing is stored or charged
      const outcome = await deps.queue
        .run(async () => {
          const header = await checkImageHeader(photo).catch((error: unknown) => {
            // the file was checked when it was stored: whatever fails now (415, 422) is the stored file's fault
            if (isAppError(error) && error.code !== 'SERVER_BUSY') {
              throw new AppError('IMAGE_UNREADABLE', 'The stored photo of this scan cannot be read, so its overlays cannot be made.');
            }
            throw error;
          });
          const frame = await decodeFrame(photo, header);
          return deps.analyzer.analyze({ image: photo, verbose: true, frame });
        })
        .catch((error: unknown) => {
          if (isAppError(error) && UNREADABLE_BY_MODEL.has(error.code)) {
            throw new AppError(
              error.code,
              `The current model version (${deps.analyzer.modelVersion}) cannot read this stored photo, so its overlays cannot be made: ` +
                `${error.message} The scan's result (model ${scan.result.modelVersion}) stays as stored.`,
            );
          }
          throw error;
        });
      return { overlays: outcome.verbose?.overlays ?? {}, points: outcome.verbose?.points ?? [] };
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
      // recorded in the scan's changes as a correction is; measuredAt moves even for the same value
      const updated = await store.scans.edit(scan.id, { measurementMm: value }, { at: clock.now(), via: viaOf(caller) });
      if (!updated) throw notFound();
      return presentScan(updated);
    },

    async update(caller, scanId, patch: ScanPatch) {
      const edit = checkPatch(patch);
      const scan = await changeableScan(caller, scanId);
      // a reading sent again unchanged is no correction here (PUT /measurement records a new reading time)
      if (edit.measurementMm !== undefined && edit.measurementMm === scan.measurementMm) delete edit.measurementMm;
      const updated = await store.scans.edit(scan.id, edit, { at: clock.now(), via: viaOf(caller) });
      if (!updated) throw notFound();
      return presentScan(updated);
    },

    async vehicles(caller, query) {
      const { limit, cursor, scansPerVehicle, ...rest } = query;
      const page = await store.scans.vehicles({
        accountId: caller.account.id,
        ...checkFilter(rest),
        limit: checkLimit(limit, 'limit', DEFAULT_VEHICLE_PAGE, MAX_VEHICLE_PAGE),
        scansPerVehicle: checkLimit(scansPerVehicle, 'scansPerVehicle', DEFAULT_SCANS_PER_VEHICLE, MAX_SCANS_PER_VEHICLE),
        ...(cursor === undefined ? {} : { cursor }),
      });
      return { ...page, items: page.items.map((group) => ({ ...group, scans: group.scans.map(presentScan) })) };
    },

    async exportCsv(caller, query, format = 'csv') {
      return scansToCsv((await store.scans.all({ accountId: caller.account.id, ...checkFilter(query) })).map(presentScan), format);
    },
  };
}
