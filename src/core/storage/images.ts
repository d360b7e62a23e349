/** Where scan images live: a directory (hub instances share one). Keys are relative names. */
export interface ImageStore {
  /** Atomic: written to a temporary file, flushed, then renamed into place. */
  put(key: string, data: Buffer): Promise<void>;
  /** AppError NOT_FOUND when absent. */
  get(key: string): Promise<Buffer>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
}
