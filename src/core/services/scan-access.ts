/**
 * Who may see and change a scan (docs/API.md §5): an account's scan only that account (FORBIDDEN to
 * anyone else); an anonymous scan whoever holds its unguessable id; deleted is NOT_FOUND. On a hub a
 * scan synced from a shop is that shop's to change.
 */
import { AppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord, Caller, ScanRecord } from '../types.js';

export function notFound(): AppError {
  return new AppError('NOT_FOUND', 'No such scan.');
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

/** The stored record (measuredAt as sync needs it); callers get presentScan() of it. */
export async function visibleScan(store: Pick<Store, 'scans'>, caller: Caller, scanId: string): Promise<ScanRecord> {
  if (typeof scanId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(scanId)) throw notFound();
  const scan = await store.scans.get(scanId);
  if (!scan || scan.deletedAt) throw notFound();
  if (scan.accountId === null) return scan;
  if (caller.kind === 'account' && caller.account.id === scan.accountId) return scan;
  // without credentials the caller may well be its owner who forgot the key: say what is missing
  // (a staff screen may show this: no HTTP header named; a POS reads the code)
  if (caller.kind === 'anonymous') throw new AppError('INVALID_SESSION', "This scan belongs to a shop account: sign in (or use the shop's API key) to see it.");
  throw new AppError('FORBIDDEN', 'This scan belongs to another account.');
}

/**
 * A scan the caller may change or delete. On a hub a scan synced from a shop is that shop's
 * (docs/HUB.md): another shop's key may read it but not change it, as PUT /sync/scans refuses;
 * the chain office, signed in, may. A shop whose key was revoked leaves its scans to the others.
 */
export async function changeableScan(store: Pick<Store, 'scans' | 'apiKeys'>, caller: Caller, scanId: string): Promise<ScanRecord> {
  const scan = await visibleScan(store, caller, scanId);
  if (scan.source !== 'sync' || scan.apiKeyId === null || caller.kind !== 'account' || caller.via !== 'key') return scan;
  const shop = await otherLiveShop(store, caller.account.id, scan.apiKeyId, caller.apiKeyId);
  if (!shop) return scan;
  throw new AppError(
    'FORBIDDEN',
    `This scan was synced from another shop of this hub account ("${shop.name}"), which alone may change or delete it; the chain office may, signed in.`,
  );
}
