/**
 * The hub's side of a push: file a desktop's scan under the pushing hub account,
 * storing its image the first time and merging later edits (store.upsertSynced).
 * Safe to repeat and safe on several instances at once: a first push writes its image files
 * atomically under names of its own (`<id>.v<upload>`), which the stored scan names only if this
 * push is the one stored, and the merge is one transaction. A deletion removes the photos.
 *
 * A refusal about the scan itself is made with scanRefusal (wire.ts), which marks it so
 * the desktop skips that scan; anything else (storage trouble) is retried by the desktop.
 */
import { AppError, isAppError } from '../errors.js';
import { extensionFor, inspectImage } from '../images/inspect.js';
import { imageKeys } from '../services/support/image-keys.js';
import { randomId, sha256Hex } from '../services/support/ids.js';
import { otherLiveShop } from '../services/scan-access.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import type { ScanRecord } from '../types.js';
import { fromSyncScan, scanRefusal, type SyncScan } from './wire.js';

/** Best effort: a file left behind is unreferenced, and the leftover sweep removes it later. */
async function removeFiles(images: ImageStore, keys: { originalKey: string; thumbnailKey: string }): Promise<void> {
  await Promise.all([images.delete(keys.originalKey), images.delete(keys.thumbnailKey)].map((p) => p.catch(() => undefined)));
}

export interface ReceiveDeps {
  store: Pick<Store, 'scans' | 'apiKeys'>;
  images: ImageStore;
  /**
   * Runs a pushed photo's decode: on a server, in the analysis queue's background turn
   * (AnalysisQueue.runBackground), so pushes never decode beside the analyses' slots but after them.
   */
  decode?: <T>(task: () => Promise<T>) => Promise<T>;
}

export interface SyncOwner {
  accountId: string;
  apiKeyId: string | null;
}

/**
 * A scan belongs to the shop (hub API key) that first pushed it: another key of the same
 * account may not change or delete it (two desktops sharing a copied history would
 * otherwise overwrite each other's scans unseen). The one exception is a shop that replaced
 * its key: once the first key is revoked (or gone from the hub), another key carries on.
 */
async function checkShop(store: ReceiveDeps['store'], owner: SyncOwner, existing: ScanRecord): Promise<void> {
  if (existing.apiKeyId === owner.apiKeyId) return;
  if (existing.apiKeyId === null) {
    throw scanRefusal('FORBIDDEN', 'This scan id belongs to a scan made on the hub itself; a shop cannot change it');
  }
  const first = await otherLiveShop(store, owner.accountId, existing.apiKeyId, owner.apiKeyId);
  if (!first) return;
  throw scanRefusal(
    'FORBIDDEN',
    `This scan id belongs to another shop of this hub account ("${first.name}"), which alone may change or delete it; ` +
      'two computers that share a copied history need one hub key each and keep their own scans',
  );
}

/**
 * Errors: FORBIDDEN (the id belongs to another account, or to another shop of this one),
 * CONFLICT (the hub has never seen this live scan and no image came with it: send again
 * with the image), VALIDATION_ERROR (the image is not the one the metadata describes), and
 * the image checks of an upload (415/422). All but CONFLICT are refusals about the scan.
 */
/** A desk clock off the hub's by less than this is left alone (network time keeps PCs far closer). */
export const CLOCK_SKEW_TOLERANCE_MS = 2 * 60_000;
/** An offset beyond this is no clock that runs fast or slow but a broken header: ignored. */
const MAX_CLOCK_SKEW_MS = 366 * 24 * 3_600_000;

/**
 * The pushed scan with its reading and deletion times moved onto the hub's clock, when the desk
 * said what time it was as it began the upload (`deskTime`, its X-Desk-Time; `hubNow`: the hub's
 * time as the upload began) and its clock is off by more than the tolerance: a desk an hour fast
 * would otherwise win every last-writer-wins merge against the office's later corrections, for
 * as long as its changes are sent again. The offset is rounded to whole minutes, so the network's
 * jitter cannot make each re-send of one reading a new, slightly later one. It is the offset of
 * now: a reading taken while the desk's clock was right and sent after it went wrong is moved
 * too. The scan's own time (createdAt, immutable on the hub) is kept. Without the header, or with
 * one that is no time, or an offset of more than a year: as sent.
 */
export function onHubClock(wire: SyncScan, deskTime: string | undefined, hubNow: Date): { scan: SyncScan; skewMs: number } {
  const desk = deskTime === undefined || !/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(deskTime) ? Number.NaN : Date.parse(deskTime);
  const measured = Number.isFinite(desk) ? hubNow.getTime() - desk : 0;
  const skewMs = Math.abs(measured) > MAX_CLOCK_SKEW_MS ? 0 : Math.round(measured / 60_000) * 60_000;
  if (Math.abs(skewMs) <= CLOCK_SKEW_TOLERANCE_MS) return { scan: wire, skewMs };
  const shift = (iso: string | null) => (iso === null ? null : new Date(Date.parse(iso) + skewMs).toISOString());
  const scan: SyncScan = { ...wire, measuredAt: shift(wire.measuredAt), deletedAt: shift(wire.deletedAt) };
  // a correction's time is moved as a reading's is (its last-writer-wins merge needs it), and the history with it
  if (wire.editedAt !== undefined) scan.editedAt = shift(wire.editedAt);
  if (wire.changes !== undefined) scan.changes = wire.changes.map((change) => ({ ...change, at: shift(change.at)! }));
  return { scan, skewMs };
}

/** The pushed photo inspected; one the hub cannot take (unreadable, too small, not an image) is refused as about this scan. */
async function inspectPushed(deps: Pick<ReceiveDeps, 'decode'>, image: Buffer): Promise<Awaited<ReturnType<typeof inspectImage>>> {
  try {
    return await (deps.decode ? deps.decode(() => inspectImage(image)) : inspectImage(image));
  } catch (error) {
    if (isAppError(error)) throw scanRefusal(error.code, error.message, error);
    throw error;
  }
}

export async function receiveSyncedScan(deps: ReceiveDeps, owner: SyncOwner, wire: SyncScan, image: Buffer | null): Promise<ScanRecord> {
  const existing = await deps.store.scans.get(wire.scanId);
  if (existing) return mergeInto(deps, owner, wire, existing, image);

  if (image === null) {
    if (wire.deletedAt === null) {
      throw new AppError('CONFLICT', 'The hub does not have this scan yet; send it again with its image');
    }
    // A deletion of a scan the hub never received: keep the tombstone, there is no image to keep.
    const stored = await deps.store.scans.upsertSynced(fromSyncScan(wire, owner, imageKeys(wire.scanId, extensionFor(wire.image.mime))), 'none');
    // ours, or a copy another push stored meanwhile, checked and merged as any later push
    return mergeInto(deps, owner, wire, stored);
  }

  // Hash before decoding: bytes that are not the image the metadata names never reach the decoder.
  if (sha256Hex(image) !== wire.image.sha256) {
    throw scanRefusal('VALIDATION_ERROR', 'The image does not match scan.image.sha256');
  }
  const inspected = await inspectPushed(deps, image);
  // names of this upload's own: another first push of the same id may be stored instead
  const keys = imageKeys(wire.scanId, extensionFor(inspected.mime), randomId().slice(0, 16));
  await deps.images.put(keys.originalKey, image);
  await deps.images.put(keys.thumbnailKey, inspected.thumbnail);
  const { mime, width, height, bytes } = inspected;
  const stored = await deps.store.scans.upsertSynced(
    fromSyncScan({ ...wire, image: { mime, width, height, bytes, sha256: wire.image.sha256 } }, owner, keys),
    'none',
  );
  if (stored.image.originalKey === keys.originalKey) return stored;
  // Another push stored the same id first, between the lookup above and now (two first uploads
  // at once): that copy keeps its own files, ours name nothing; the insert-only upsert left it
  // as it was, and this push is now checked against it as any later push is.
  await removeFiles(deps.images, keys);
  return mergeInto(deps, owner, wire, stored);
}

/**
 * A push of a scan the hub holds: refused unless the copy is this account's and this shop may
 * change it (checkShop), then merged into exactly the copy checked, inside the store's transaction.
 */
async function mergeInto(deps: ReceiveDeps, owner: SyncOwner, wire: SyncScan, existing: ScanRecord, image: Buffer | null = null): Promise<ScanRecord> {
  if (existing.accountId !== owner.accountId) throw scanRefusal('FORBIDDEN', 'This scan id belongs to another account');
  await checkShop(deps.store, owner, existing);
  if (existing.deletedAt === null && wire.deletedAt === null) await restorePhotos(deps, existing, image);
  const merged = await deps.store.scans.upsertSynced(fromSyncScan(wire, owner, existing.image), { apiKeyId: existing.apiKeyId });
  // a deletion synced from the shop: the photos are the customer's data and go now, as a
  // deletion made on the hub removes them (services/scans.ts); the record stays as a tombstone
  if (existing.deletedAt === null && merged.deletedAt !== null) await removeFiles(deps.images, merged.image);
  return merged;
}

/**
 * A live scan whose photo the hub no longer has (a disk restored from an older backup than the
 * database, a file removed by hand): the desk's photo is put back under the record's own names
 * when one came with the push and is the one the record describes; without one the push is
 * answered CONFLICT, which makes the desk send it again with its photo (pusher.ts). A thumbnail
 * that alone is gone is made again from the photo. Writes are atomic and of the same bytes, so
 * two pushes doing this at once are harmless.
 */
async function restorePhotos(deps: ReceiveDeps, existing: ScanRecord, image: Buffer | null): Promise<void> {
  const { images } = deps;
  const { originalKey, thumbnailKey } = existing.image;
  if (await images.exists(originalKey)) {
    if (await images.exists(thumbnailKey)) return;
    const original = await images.get(originalKey);
    await images.put(thumbnailKey, (await inspectPushed(deps, original)).thumbnail);
    return;
  }
  if (image === null) {
    throw new AppError('CONFLICT', 'The hub has this scan but not its photo; send it again with its image');
  }
  if (sha256Hex(image) !== existing.image.sha256) {
    throw scanRefusal('VALIDATION_ERROR', 'The image is not the one this scan was first stored with (scan.image.sha256)');
  }
  const inspected = await inspectPushed(deps, image);
  await images.put(originalKey, image);
  await images.put(thumbnailKey, inspected.thumbnail);
}
