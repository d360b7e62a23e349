/**
 * The scan service: analyze (see analyze.ts) plus history, images, gauge readings and
 * CSV export. Who may see and change a scan: scan-access.ts; what callers send is checked by
 * scan-checks.ts; overlays: scan-overlays.ts.
 */
import { DEFAULT_SCANS_PER_VEHICLE, DEFAULT_VEHICLE_PAGE, MAX_SCANS_PER_VEHICLE, MAX_VEHICLE_PAGE, MAX_MEASUREMENT_MM } from '../../shared/contract/limits.js';
import type { ScanFilter } from '../storage/store.js';
import type { Caller, ScanChangeVia } from '../types.js';
import { analyzeScan, type AnalyzeDeps } from './analyze.js';
import type { ScanPatch, ScanService } from './ports.js';
import { changeableScan, notFound, presentScan, visibleScan } from './scan-access.js';
import { checkFilter, checkLimit, checkMeasurement, checkPatch } from './scan-checks.js';
import { readOverlays } from './scan-overlays.js';
import { perMinuteLimit } from './support/caller-limit.js';
import { scansToCsv } from './support/csv.js';

/**
 * GET /scans/:id/overlays a caller may ask in a minute. Each is a whole analysis of the stored photo
 * (the cost of a scan, free): a person opens a few scans a minute and asks each once (the History
 * card keeps them), so this leaves room for that and stops a loop from keeping the processor busy.
 */
export const OVERLAYS_PER_MINUTE = 30;
/** The contract's bound, the same for PUT /measurement, PATCH and the sync wire (docs/API.md §9, item 9). */
export { MAX_MEASUREMENT_MM };

function viaOf(caller: Caller): ScanChangeVia {
  return caller.kind === 'account' ? caller.via : 'anonymous';
}

export function createScanService(deps: AnalyzeDeps): ScanService {
  const { store, images, clock, metering } = deps;
  const overlayLimit = perMinuteLimit(OVERLAYS_PER_MINUTE, 'overlay requests');

  return {
    analyze: (command) => analyzeScan(deps, command),

    rateLimit: (caller) => metering.state(caller, clock.now()),

    refusalBeforeUpload: (caller) => metering.spentRefusal(caller, clock.now()),

    get: async (caller, scanId) => presentScan(await visibleScan(store, caller, scanId)),

    async list(caller, query) {
      const limit = checkLimit(query.limit);
      const filter: ScanFilter = { accountId: caller.account.id, ...checkFilter(query), limit };
      if (query.cursor !== undefined) filter.cursor = query.cursor;
      const page = await store.scans.list(filter);
      return { ...page, items: page.items.map(presentScan) };
    },

    async image(caller, scanId, variant) {
      const scan = await visibleScan(store, caller, scanId);
      if (variant === 'thumbnail') return { mime: 'image/jpeg', data: await images.get(scan.image.thumbnailKey) };
      return { mime: scan.image.mime, data: await images.get(scan.image.originalKey) };
    },

    async overlays(caller, scanId) {
      overlayLimit(caller, clock.now().getTime());
      const scan = await visibleScan(store, caller, scanId);
      return readOverlays(deps, scan);
    },

    async delete(caller, scanId) {
      const scan = await changeableScan(store, caller, scanId);
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
      const scan = await changeableScan(store, caller, scanId);
      // recorded in the scan's changes as a correction is; measuredAt moves even for the same value
      const updated = await store.scans.edit(scan.id, { measurementMm: value }, { at: clock.now(), via: viaOf(caller) });
      if (!updated) throw notFound();
      return presentScan(updated);
    },

    async update(caller, scanId, patch: ScanPatch) {
      const edit = checkPatch(patch);
      const scan = await changeableScan(store, caller, scanId);
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
