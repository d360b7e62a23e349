/**
 * The hub's chain view: which shop each scan came from. A shop is the hub API key its
 * desktop pushes with (one per shop, named by the chain's owner), so a page of scans is
 * named with one key lookup, whatever its size.
 */
import type { WireShop } from '../../shared/api.js';
import { AppError } from '../errors.js';
import { presentScan } from '../services/scan-access.js';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord, ScanRecord } from '../types.js';

export interface ChainScanQuery {
  limit: number;
  cursor?: string;
  /** Only the scans that came through this key of the account (one shop). */
  apiKeyId?: string;
}

export interface ChainScanPage {
  /** `shop` is null for scans made in a signed-in session on the hub: no key, no shop. */
  items: Array<{ scan: ScanRecord; shop: WireShop | null }>;
  nextCursor: string | null;
}

type ShopStore = Pick<Store, 'scans' | 'apiKeys'>;

/**
 * A revoked key keeps its name, as the shop's scans still came from it; a key the hub no
 * longer has at all (gone with a restored backup, say) is told apart by its null name.
 */
export function toWireShop(apiKeyId: string, key: ApiKeyRecord | undefined): WireShop {
  return { apiKeyId, name: key?.name ?? null, deleted: key === undefined || key.revokedAt !== null };
}

/**
 * One page of the account's scans, newest first, each with its shop. AppError NOT_FOUND when
 * `apiKeyId` is not a key of this account (an unknown id is a mistake worth telling, not an empty shop).
 */
export async function listChainScans(store: ShopStore, accountId: string, query: ChainScanQuery): Promise<ChainScanPage> {
  let keys = new Map<string, ApiKeyRecord>();
  if (query.apiKeyId !== undefined) {
    const [key] = await store.apiKeys.findByIds(accountId, [query.apiKeyId]);
    if (!key) throw new AppError('NOT_FOUND', 'This hub account has no API key with that id; GET /sync/shops lists its shops');
    keys.set(key.id, key);
  }
  const page = await store.scans.list({
    accountId,
    limit: query.limit,
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    ...(query.apiKeyId !== undefined ? { apiKeyId: query.apiKeyId } : {}),
  });
  // Filtered by one shop, that shop's key is already known; otherwise one lookup for the whole page.
  if (query.apiKeyId === undefined) {
    const ids = [...new Set(page.items.flatMap((scan) => (scan.apiKeyId === null ? [] : [scan.apiKeyId])))];
    if (ids.length > 0) keys = new Map((await store.apiKeys.findByIds(accountId, ids)).map((key) => [key.id, key]));
  }
  return {
    nextCursor: page.nextCursor,
    items: page.items.map((scan) => ({
      // a cleared gauge reading shows no reading time, as everywhere callers read scans
      scan: presentScan(scan),
      shop: scan.apiKeyId === null ? null : toWireShop(scan.apiKeyId, keys.get(scan.apiKeyId)),
    })),
  };
}

/** Every key of the account by name, deleted ones included: the choices of a shop filter. */
export async function listChainShops(store: Pick<Store, 'apiKeys'>, accountId: string): Promise<WireShop[]> {
  const keys = await store.apiKeys.listForAccount(accountId);
  keys.sort((a, b) => a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1));
  return keys.map((key) => toWireShop(key.id, key));
}
