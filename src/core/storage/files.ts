/** ImageStore on a directory. Hub instances may share one directory (e.g. a network mount). */
import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.js';
import { sleepSync } from '../sleep-sync.js';
import type { ImageStore } from './images.js';

/** Segments of [A-Za-z0-9._-] not starting with a dot: no `..`, no hidden names clashing with temp files. */
const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/**
 * Keys come from our own code, but they end up in file paths: anything that could leave the
 * directory (absolute, `..`, backslashes, empty segments) is refused rather than normalised.
 */
export function assertImageKey(key: string): void {
  if (key.length > 255 || !KEY_PATTERN.test(key)) {
    throw new AppError('VALIDATION_ERROR', `Invalid image key "${key.slice(0, 80)}"`);
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * The disk, not the caller and not a bug: full, read-only, not a folder, out of handles, failing,
 * or (Windows) a file another program holds open (EBUSY: an antivirus scan, a backup).
 */
const UNAVAILABLE = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EIO', 'EMFILE', 'ENFILE', 'EBUSY']);

/** Pauses between tries of a rename Windows refused for a moment: ≈ 3.4 s in all. */
export const RENAME_RETRY_DELAYS_MS = [10, 30, 60, 100, 200, 400, 600, 800, 1200] as const;

export interface RenameRetryOptions {
  platform?: NodeJS.Platform;
  rename?: (from: string, to: string) => Promise<void>;
  delaysMs?: readonly number[];
  sleep?: (ms: number) => Promise<void>;
}

/**
 * fs.rename, tried again on Windows while it fails with EPERM, EBUSY or EACCES: there a file that
 * was just written or is about to be replaced is often open for a moment in an antivirus scanner,
 * a backup or a sync tool (OneDrive) without share-delete, and MoveFileEx refuses (npm and git
 * know it as "EPERM: operation not permitted, rename"). Elsewhere, and for any other error, the
 * first failure is the answer.
 */
export async function renameRetrying(from: string, to: string, options: RenameRetryOptions = {}): Promise<void> {
  const { platform = process.platform, rename: move = rename, delaysMs = RENAME_RETRY_DELAYS_MS } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt++) {
    try {
      return await move(from, to);
    } catch (error) {
      if (!worthRetrying(error, platform, attempt, delaysMs)) throw error;
      await sleep(delaysMs[attempt]!);
    }
  }
}

/** renameRetrying for start-up code that cannot await (opening the database). */
export function renameRetryingSync(from: string, to: string, platform: NodeJS.Platform = process.platform): void {
  for (let attempt = 0; ; attempt++) {
    try {
      return renameSync(from, to);
    } catch (error) {
      if (!worthRetrying(error, platform, attempt, RENAME_RETRY_DELAYS_MS)) throw error;
      sleepSync(RENAME_RETRY_DELAYS_MS[attempt]!);
    }
  }
}

function worthRetrying(error: unknown, platform: NodeJS.Platform, attempt: number, delaysMs: readonly number[]): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  return platform === 'win32' && ['EPERM', 'EBUSY', 'EACCES'].includes(code) && attempt < delaysMs.length;
}

/**
 * Which of a file system's refusals an errno is, for a message a person can act on: the disk is
 * full, the place cannot be written (read-only, not allowed to this program), or neither.
 */
export function diskRefusal(code: string | undefined): 'full' | 'not-writable' | null {
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'full';
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return 'not-writable';
  return null;
}

/**
 * Like the database's mapping: the caller gets a retryable 503 STORAGE_UNAVAILABLE saying which
 * of the likely causes it is, the log keeps the cause (errno and path). `writing`: a write's
 * ENOENT is the disk's too (Node's recursive mkdir answers it on a read-only file system).
 */
function storageError(error: unknown, writing = false): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  if (!UNAVAILABLE.has(code) && !(writing && code === 'ENOENT')) return error;
  const refusal = diskRefusal(code);
  const message =
    refusal === 'full'
      ? 'The disk holding the image folder is full; free space on it, then try again (nothing was saved)'
      : refusal === 'not-writable' || code === 'ENOENT'
        ? 'The image folder cannot be written (read-only, or not allowed to this program); try again once it can'
        : 'The image folder cannot be written or read (a disk error, too many open files, or a file another program holds open); try again later';
  return new AppError('STORAGE_UNAVAILABLE', message, { cause: error });
}

/** Names of write()'s temporary files: what a write cut short by a crash leaves behind. */
export const TEMP_FILE_PATTERN = /^\..+\.[0-9a-f]{12}\.tmp$/;

/** What some file systems (network mounts, FUSE) answer to flushing a folder: it cannot be done there. */
const FOLDER_SYNC_UNSUPPORTED = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EBADF']);

/**
 * Flushes a folder's entries (new names, renames) to disk, so a file whose scan the database has
 * committed is still there after a power cut. Windows cannot open a folder for syncing (and its
 * renames are journalled by NTFS), so there it is skipped; so is a file system (e.g. a network
 * mount under a hub) that does not support it: the file itself is flushed already.
 */
async function syncFolder(folder: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } catch (error) {
    if (!FOLDER_SYNC_UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle.close();
  }
}

/** Written to a temporary file in the target's folder, flushed, renamed into place (atomic), folder flushed. */
async function write(target: string, data: Buffer): Promise<void> {
  const folder = path.dirname(target);
  // A folder created here is a new entry in its parent: flush the parents too, from the first one made.
  const created = await mkdir(folder, { recursive: true });
  if (created !== undefined) {
    for (let dir = folder; dir !== path.dirname(created); dir = path.dirname(dir)) await syncFolder(path.dirname(dir));
  }
  // Same directory as the target, so the rename is atomic: readers see the old file or the whole new one.
  await writeAtomically(target, path.join(folder, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`), data);
  await syncFolder(folder);
}

/**
 * Write-to-temp, flush, rename: a crash leaves the old file or the new one, never half of either.
 * `temp` (a new name in the target's folder, so the rename is atomic) is removed when anything
 * fails: a full disk leaves no empty temp file behind for a later start to sweep.
 */
export async function writeAtomically(target: string, temp: string, data: string | Buffer, mode?: number): Promise<void> {
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await renameRetrying(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export function createFileImageStore(dir: string): ImageStore {
  const root = path.resolve(dir);
  const fileOf = (key: string): string => {
    assertImageKey(key);
    return path.join(root, ...key.split('/'));
  };

  return {
    async put(key, data) {
      try {
        await write(fileOf(key), data);
      } catch (error) {
        throw storageError(error, true);
      }
    },
    async get(key) {
      try {
        return await readFile(fileOf(key));
      } catch (error) {
        if (isMissing(error)) throw new AppError('NOT_FOUND', 'Image not found');
        throw storageError(error);
      }
    },
    async delete(key) {
      await rm(fileOf(key), { force: true });
    },
    async exists(key) {
      try {
        return (await stat(fileOf(key))).isFile();
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },
  };
}
