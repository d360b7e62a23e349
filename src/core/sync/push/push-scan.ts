/** One change sent to the hub, with its photo when the hub needs it, and which failures skip it for good. */
import { isAppError } from '../../errors.js';
import type { ImageStore } from '../../storage/images.js';
import type { ScanRecord } from '../../types.js';
import type { DeskPosition } from '../desk-marks.js';
import { HubError, type HubClient, type PushAnswer } from '../hub-client.js';
import { toSyncScan } from '../wire.js';

class LocalImageMissing extends Error {
  constructor(scanId: string) {
    super(`the image of scan ${scanId} is missing on this computer`);
    this.name = 'LocalImageMissing';
  }
}

/** A refusal about this one scan, which sending it again cannot change. */
export function isPermanent(error: unknown): boolean {
  if (error instanceof LocalImageMissing) return true;
  return error instanceof HubError && error.refusesScan;
}

async function loadImage(images: ImageStore, scan: ScanRecord): Promise<{ data: Buffer; mime: string }> {
  // only a photo that is gone is skipped for good; a read that failed (permissions, a disk
  // error: STORAGE_UNAVAILABLE) fails the pass, which is retried, the scan held until it reads
  const data = await images.get(scan.image.originalKey).catch((error: unknown) => {
    if (isAppError(error) && error.code === 'NOT_FOUND') return null;
    throw error;
  });
  if (data === null) throw new LocalImageMissing(scan.id);
  return { data, mime: scan.image.mime };
}

/**
 * A deletion goes alone (the hub keeps a tombstone even of a scan it never saw). A new
 * scan goes with its image. An edit goes without, and again with the image only when
 * the hub turns out not to have the scan yet; so does a change being replayed.
 */
export async function pushScan(hub: HubClient, images: ImageStore, scan: ScanRecord, replay: boolean, position: DeskPosition): Promise<PushAnswer> {
  const wire = toSyncScan(scan);
  if (scan.deletedAt !== null) return hub.pushScan(wire, null, position);
  const withoutImageFirst = replay || scan.measuredAt !== null;
  if (withoutImageFirst) {
    const answer = await hub.pushScan(wire, null, position);
    if (answer.outcome === 'stored') return answer;
  }
  return hub.pushScan(wire, await loadImage(images, scan), position);
}
