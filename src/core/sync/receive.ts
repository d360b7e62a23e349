/**
 * The hub's side of a push: file a desktop's scan under the pushing hub account,
 * storing its image the first time and merging later edits (store.upsertSynced).
 * Safe to repeat and safe on several instances at once: the image files are written
 * atomically under names fixed by the scan id, and the merge is one transaction.
 */
import { AppError } from '../errors.js';
import { extensionFor, inspectImage } from '../images/inspect.js';
import { imageKeys } from '../services/analyze.js';
import { sha256Hex } from '../services/ids.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import type { ScanRecord } from '../types.js';
import { fromSyncScan, type SyncScan } from './wire.js';

export interface ReceiveDeps {
  store: Pick<Store, 'scans'>;
  images: ImageStore;
}

export interface SyncOwner {
  accountId: string;
  apiKeyId: string | null;
}

/**
 * Errors: FORBIDDEN (the id belongs to another account), CONFLICT (the hub has never
 * seen this live scan and no image came with it: send again with the image),
 * VALIDATION_ERROR (the image is not the one the metadata describes), and the image
 * checks of an upload (415/422).
 */
export async function receiveSyncedScan(
  deps: ReceiveDeps,
  owner: SyncOwner,
  wire: SyncScan,
  image: Buffer | null,
): Promise<ScanRecord> {
  const existing = await deps.store.scans.get(wire.scanId);
  if (existing && existing.accountId !== owner.accountId) {
    throw new AppError('FORBIDDEN', 'This scan id belongs to another account');
  }
  if (existing) return deps.store.scans.upsertSynced(fromSyncScan(wire, owner, existing.image));

  if (image === null) {
    if (wire.deletedAt === null) {
      throw new AppError('CONFLICT', 'The hub does not have this scan yet; send it again with its image');
    }
    // A deletion of a scan the hub never received: keep the tombstone, there is no image to keep.
    return deps.store.scans.upsertSynced(fromSyncScan(wire, owner, imageKeys(wire.scanId, extensionFor(wire.image.mime))));
  }

  // Hash before decoding: bytes that are not the image the metadata names never reach the decoder.
  if (sha256Hex(image) !== wire.image.sha256) {
    throw new AppError('VALIDATION_ERROR', 'The image does not match scan.image.sha256');
  }
  const inspected = await inspectImage(image);
  const keys = imageKeys(wire.scanId, extensionFor(inspected.mime));
  await deps.images.put(keys.originalKey, image);
  await deps.images.put(keys.thumbnailKey, inspected.thumbnail);
  const { mime, width, height, bytes } = inspected;
  return deps.store.scans.upsertSynced(
    fromSyncScan({ ...wire, image: { mime, width, height, bytes, sha256: wire.image.sha256 } }, owner, keys),
  );
}
