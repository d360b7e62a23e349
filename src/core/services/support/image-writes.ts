/**
 * The image files one scan is writing. The scan service starts them early so that the disk works
 * while the upload is decoded and analysed; if the scan then fails, each file is deleted only
 * after its write has settled — a delete that ran first would leave the late write's file behind.
 */
import type { ImageStore } from '../../storage/images.js';

export class ImageWrites {
  private readonly pending: Array<{ key: string; write: Promise<void> }> = [];

  constructor(private readonly images: ImageStore) {}

  /** Starts writing `data` under `key`. The promise is the write's outcome. */
  put(key: string, data: Buffer): Promise<void> {
    return this.track(key, this.images.put(key, data));
  }

  /**
   * Tracks work that ends by writing `key` (e.g. making a thumbnail, then putting it), from the
   * moment it starts, so removeAll() also waits for a write that has not begun yet.
   */
  track(key: string, write: Promise<void>): Promise<void> {
    // Whoever fails first may never await the others; their rejections are seen by removeAll().
    write.catch(() => undefined);
    this.pending.push({ key, write });
    return write;
  }

  /** Waits for every write to settle, then deletes its file (written or not; delete is idempotent). */
  async removeAll(): Promise<Array<PromiseSettledResult<void>>> {
    return Promise.allSettled(
      this.pending.map(async ({ key, write }) => {
        await write.catch(() => undefined);
        await this.images.delete(key);
      }),
    );
  }
}
