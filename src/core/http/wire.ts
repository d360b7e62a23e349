/** Domain records → the JSON shapes of src/shared/api.ts (dates become ISO strings, secrets stay behind). */
import type {
  AccountData,
  WireAccount,
  WireApiKey,
  WireScan,
  RedeemData,
} from '../../shared/api.js';
import type { AccountSummary } from '../services/ports.js';
import type { Account, ApiKeyRecord, RedeemedLicense, ScanRecord } from '../types.js';

export const API_PREFIX = '/api/v1';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toWireAccount(account: Account): WireAccount {
  return { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() };
}

export function scanImageUrl(scanId: string, variant: 'original' | 'thumbnail' = 'original'): string {
  const url = `${API_PREFIX}/scans/${encodeURIComponent(scanId)}/image`;
  return variant === 'thumbnail' ? `${url}?variant=thumbnail` : url;
}

export function toWireScan(scan: ScanRecord): WireScan {
  return {
    scanId: scan.id,
    createdAt: scan.createdAt.toISOString(),
    vehicle: scan.vehicle,
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
