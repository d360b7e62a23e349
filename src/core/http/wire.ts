/** Domain records → the JSON shapes of src/shared/api.ts (dates become ISO strings, secrets stay behind). */
import type { AccountData, DepthOfRecord, VehicleGroup, WireAccount, WireApiKey, WireScan, RedeemData } from '../../shared/api.js';
import type { AccountSummary } from '../services/ports.js';
import type { VehicleGroupRecord } from '../storage/store.js';
import type { Account, ApiKeyRecord, RedeemedLicense, ScanRecord } from '../types.js';
import { treadHealthIndex } from '../analysis/analyzer.js';
import { wearForDepth, whole32nds } from '../../shared/units.js';
import { vehicleKey } from '../../shared/vehicle.js';

export const API_PREFIX = '/api/v1';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toWireAccount(account: Account): WireAccount {
  return { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() };
}

export function scanImageUrl(scanId: string, variant: 'original' | 'thumbnail' = 'original'): string {
  const url = `${API_PREFIX}/scans/${encodeURIComponent(scanId)}/image`;
  return variant === 'thumbnail' ? `${url}?variant=thumbnail` : url;
}

/**
 * The depth a scan stands for (issue 42): a gauge reading, where there is one, is the measured depth
 * and wins over the photo's estimate, for the colour, the advice and the 32nds alike; and a measured
 * scan is no longer preliminary.
 */
export function depthOfRecord(scan: Pick<ScanRecord, 'measurementMm' | 'result'>): {
  depthOfRecordMm: number;
  isPreliminary: boolean;
  ofRecord: DepthOfRecord;
} {
  const gauge = scan.measurementMm;
  const depth = gauge ?? scan.result.estimatedDepthMm;
  return {
    depthOfRecordMm: depth,
    isPreliminary: gauge === null ? scan.result.isPreliminary : false,
    ofRecord: {
      source: gauge === null ? 'estimate' : 'gauge',
      // the estimate's own wear and 32nds as analysed; a gauge reading's from its depth
      wear: gauge === null ? scan.result.wear : wearForDepth(gauge),
      depth32nds: gauge === null ? scan.result.depth32nds : whole32nds(gauge),
      treadHealthIndex: gauge === null ? scan.result.treadHealthIndex : treadHealthIndex(gauge),
    },
  };
}

export function toWireScan(scan: ScanRecord): WireScan {
  return {
    scanId: scan.id,
    createdAt: scan.createdAt.toISOString(),
    vehicle: scan.vehicle,
    vehicleKey: vehicleKey(scan.vehicle),
    position: scan.position,
    result: scan.result,
    image: {
      width: scan.image.width,
      height: scan.image.height,
      mime: scan.image.mime,
      url: scanImageUrl(scan.id),
      thumbnailUrl: scanImageUrl(scan.id, 'thumbnail'),
    },
    measurementMm: scan.measurementMm,
    measuredAt: iso(scan.measuredAt),
    ...depthOfRecord(scan),
    changes: scan.changes.map((c) => ({ at: c.at.toISOString(), field: c.field, from: c.from, to: c.to, via: c.via })),
  };
}

export function toWireVehicleGroup(group: VehicleGroupRecord): VehicleGroup {
  return {
    vehicleKey: group.vehicleKey,
    vehicle: group.vehicleKey === null ? null : (group.scans[0]?.vehicle ?? null),
    scanCount: group.scanCount,
    lastScanAt: group.lastScanAt.toISOString(),
    firstScanAt: group.firstScanAt.toISOString(),
    scans: group.scans.map(toWireScan),
  };
}

export function toWireApiKey(record: ApiKeyRecord): WireApiKey {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    createdAt: record.createdAt.toISOString(),
    lastUsedAt: iso(record.lastUsedAt),
    revokedAt: iso(record.revokedAt),
  };
}

export function toWireLicense(license: RedeemedLicense): RedeemData['license'] {
  return {
    codeId: license.codeId,
    kind: license.kind,
    scans: license.scans,
    expiresAt: iso(license.expiresAt),
    redeemedAt: license.redeemedAt.toISOString(),
  };
}

export function toAccountData(summary: AccountSummary): AccountData {
  return {
    account: toWireAccount(summary.account),
    plan: summary.plan,
    proExpiresAt: iso(summary.proExpiresAt),
    allowance: { ...summary.allowance, resetAt: summary.allowance.resetAt.toISOString() },
    packCredit: summary.packCredit,
    licenses: summary.licenses.map(toWireLicense),
  };
}
