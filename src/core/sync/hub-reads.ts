/** The chain's scans, shops and photos read back from the hub for the desk's window (SyncService.hubScans and the rest). */
import type { HubScanList, WireShop } from '../../shared/api.js';
import { AppError } from '../errors.js';
import { HubError, type HubClient, type HubScanQuery } from './hub-client.js';

export const HUB_IMAGE_PATH = '/api/v1/sync/hub-scans';

/** One page of the chain's scans, their image URLs pointing at HUB_IMAGE_PATH (the desk's route to hubImage). */
export async function hubScans(hub: HubClient, query: HubScanQuery): Promise<HubScanList> {
  const page = await call(() => hub.listScans(query), 'The hub has no such shop');
  return {
    nextCursor: page.nextCursor,
    items: page.items.map((scan) => {
      const url = `${HUB_IMAGE_PATH}/${encodeURIComponent(scan.scanId)}/image`;
      return { ...scan, image: { ...scan.image, url, thumbnailUrl: `${url}?variant=thumbnail` } };
    }),
  };
}

export function hubShops(hub: HubClient): Promise<WireShop[]> {
  return call(async () => {
    try {
      return await hub.listShops();
    } catch (error) {
      // A hub from before shop names has no such route: no shops, so the window offers no filter.
      if (isHubNotFound(error)) return [];
      throw error;
    }
  }, 'The hub has no shop list');
}

export function hubImage(hub: HubClient, scanId: string, variant: 'original' | 'thumbnail'): Promise<{ mime: string; data: Buffer }> {
  return call(() => hub.image(scanId, variant), 'The hub has no such scan');
}

/** The hub's own 404: one from whatever else answers at the address is no answer about the scan. */
function isHubNotFound(error: unknown): boolean {
  return error instanceof HubError && error.status === 404 && error.code === 'NOT_FOUND';
}

/** The hub's trouble, told to the desk as a 503 (or the hub's 404, as `notFound`) without pretending it is ours. */
async function call<T>(work: () => Promise<T>, notFound: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof HubError)) throw error;
    if (isHubNotFound(error)) throw new AppError('NOT_FOUND', notFound);
    throw new AppError('STORAGE_UNAVAILABLE', `The hub could not be read: ${error.message}`, { cause: error });
  }
}
