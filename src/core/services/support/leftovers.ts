/**
 * Crash leftovers: a process killed mid-upload leaves image files that no scan refers to
 * (written, but the commit never came) and temporary files of interrupted writes. Nothing
 * else ever removes them, so each start sweeps them once, in the background (server.ts).
 *
 * Hub instances share the images folder, so a file another process is writing right now
 * looks exactly like a leftover. Only files older than LEFTOVER_MIN_AGE_MS are candidates,
 * an image only when the store says no live scan refers to it (a deleted scan's photos go: a
 * removal that failed at the deletion is retried here), and the file
 * removed is provably the one judged (see removeIfUnchanged). No image is removed when the
 * database cannot be the one the photos were written for (new, or far too many orphans).
 */
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { link, lstat, opendir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../logger.js';
import { SETTINGS_TEMP_PATTERN } from '../../settings-file.js';
import { TEMP_FILE_PATTERN } from '../../storage/files.js';
import type { Store } from '../../storage/store.js';
import { scanIdOfImageKey } from './image-keys.js';

/**
 * An upload's files are written moments before its commit: the gap is one store transaction,
 * and even an analysis stuck in the queue is given up after RESERVATION_MAX_AGE_MS (10 min).
 * Six times that also absorbs clock skew between hub hosts and the file server stamping
 * mtimes. A leftover younger than this just waits for the next start.
 */
export const LEFTOVER_MIN_AGE_MS = 60 * 60 * 1000;

/** Image candidates per store lookup: bounds memory and query size for any number of files. */
const BATCH = 200;

/**
 * More orphan images than this is no crash's leftovers (a crash leaves the two files of each
 * upload in flight, a few dozen at most) but a database that does not match the images folder:
 * restored from an older copy, or replaced. Then nothing is removed (see sweepLeftovers).
 */
export const MAX_ORPHAN_IMAGES = 100;

export interface SweepDeps {
  store: Pick<Store, 'scans' | 'createdAt'>;
  imagesDir: string;
  dataDir: string;
  logger: Logger;
}

export interface SweepOptions {
  now: Date;
  minAgeMs?: number;
  /** Stops the sweep between files (the server is closing). */
  signal?: AbortSignal;
}

export interface SweepReport {
  tempFiles: number;
  orphanImages: number;
  /** Orphan images left in place because the database does not look like theirs (0 normally). */
  keptImages: number;
  bytes: number;
  /** Files that could not be examined or removed (the first error is logged). */
  failed: number;
}

interface Candidate {
  file: string;
  key: string;
  scanId: string;
  stats: BigIntStats;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

/** Every regular file under `root` with its key (relative, `/`-separated); one open directory per level. */
async function* filesUnder(root: string, prefix = ''): AsyncGenerator<{ file: string; key: string; name: string }> {
  let dir;
  try {
    dir = await opendir(prefix ? path.join(root, ...prefix.split('/')) : root);
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  for await (const entry of dir) {
    const key = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) yield* filesUnder(root, key);
    else if (entry.isFile()) yield { file: path.join(root, ...key.split('/')), key, name: entry.name };
  }
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/**
 * A hub instance may rewrite the same key between the store lookup and the removal (a sync
 * push retried after its first attempt died). Moving the file aside first is atomic, so what
 * was moved can be checked: if it is not the file judged, it is put back and kept.
 */
async function removeIfUnchanged(candidate: Candidate): Promise<boolean> {
  const folder = path.dirname(candidate.file);
  const aside = path.join(folder, `.${path.basename(candidate.file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await rename(candidate.file, aside);
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
  const moved = await lstat(aside, { bigint: true });
  if (moved.ino === candidate.stats.ino && moved.mtimeNs === candidate.stats.mtimeNs) {
    await rm(aside, { force: true });
    return true;
  }
  try {
    // link, unlike rename, never replaces: an even newer write of the key wins.
    await link(aside, candidate.file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      await rename(aside, candidate.file);
      return false;
    }
  }
  await rm(aside, { force: true });
  return false;
}

export async function sweepLeftovers(deps: SweepDeps, options: SweepOptions): Promise<SweepReport> {
  const cutoff = options.now.getTime() - (options.minAgeMs ?? LEFTOVER_MIN_AGE_MS);
  const report: SweepReport = { tempFiles: 0, orphanImages: 0, keptImages: 0, bytes: 0, failed: 0 };
  let firstError: unknown = null;
  const attempt = async (fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (error) {
      if (isMissing(error)) return;
      report.failed++;
      firstError ??= error;
    }
  };
  const oldEnough = (stats: BigIntStats) => Number(stats.mtimeMs) <= cutoff;
  const removeTemp = (file: string) =>
    attempt(async () => {
      const stats = await lstat(file, { bigint: true });
      if (!oldEnough(stats)) return;
      await rm(file);
      report.tempFiles++;
      report.bytes += Number(stats.size);
    });

  // Orphans are only gathered during the walk; whether they go is decided once all are counted.
  const orphans: Candidate[] = [];
  let orphanCount = 0;
  // A photo older than the database was not written for it: never a crash leftover of this one
  // (the shop's old tirewear.db was deleted or replaced, and scans have been made since).
  const databaseSince = (await deps.store.createdAt())?.getTime() ?? Infinity;
  let olderThanDatabase = 0;
  let batch: Candidate[] = [];
  const flush = async () => {
    const candidates = batch;
    batch = [];
    if (candidates.length === 0 || options.signal?.aborted) return;
    const referenced = new Set(await deps.store.scans.imageKeysOf([...new Set(candidates.map((c) => c.scanId))]));
    for (const candidate of candidates) {
      if (referenced.has(candidate.key)) continue;
      if (Number(candidate.stats.mtimeMs) < databaseSince) {
        olderThanDatabase++;
        continue;
      }
      orphanCount++;
      if (orphans.length <= MAX_ORPHAN_IMAGES) orphans.push(candidate);
    }
  };

  for await (const { file, key, name } of filesUnder(deps.imagesDir)) {
    if (options.signal?.aborted) break;
    if (TEMP_FILE_PATTERN.test(name)) {
      await removeTemp(file);
      continue;
    }
    const scanId = scanIdOfImageKey(key);
    if (scanId === null) continue;
    await attempt(async () => {
      const stats = await lstat(file, { bigint: true });
      if (oldEnough(stats)) batch.push({ file, key, scanId, stats });
    });
    if (batch.length >= BATCH) await flush();
  }
  await flush();

  // A database that has never held a scan next to photos older than an hour was created afresh
  // (the old file deleted or moved away), and photos older than the database were never its
  // own: every one would look orphaned. So would most of them under a database restored from an
  // older copy. Removing them then destroys the shop's photos for good; keeping them costs disk
  // space until someone looks.
  if (olderThanDatabase > 0) {
    report.keptImages += olderThanDatabase;
    deps.logger.warn(
      { olderThanDatabase, imagesDir: deps.imagesDir },
      `${olderThanDatabase} photo file(s) in ${deps.imagesDir} are older than the database and belong to none of its scans: kept, not removed. ` +
        "Was the database (a desk's tirewear.db) deleted or replaced? Put the shop's own database back (or restore it from a backup) while the server is stopped.",
    );
  }
  const fresh = orphanCount > 0 && (await deps.store.scans.countChangesSince(0, 1)) === 0;
  if (fresh || orphanCount > MAX_ORPHAN_IMAGES) {
    report.keptImages += orphanCount;
    deps.logger.warn(
      { orphanImages: orphanCount, imagesDir: deps.imagesDir },
      `${orphanCount} photo file(s) in ${deps.imagesDir} belong to no scan in the database: kept, not removed. ` +
        (fresh
          ? "The database holds no scans at all: was it (a desk's tirewear.db) deleted or replaced? Put the shop's own database back (or restore it from a backup) while the server is stopped."
          : 'More than a crash leaves behind: was the database restored from an older copy? Restore the newest backup, or remove the files by hand if the scans are truly gone.'),
    );
  } else {
    for (const candidate of orphans) {
      if (options.signal?.aborted) break;
      await attempt(async () => {
        if (!(await removeIfUnchanged(candidate))) return;
        report.orphanImages++;
        report.bytes += Number(candidate.stats.size);
      });
    }
  }

  for (const name of await namesIn(deps.dataDir)) {
    if (SETTINGS_TEMP_PATTERN.test(name) && !options.signal?.aborted) await removeTemp(path.join(deps.dataDir, name));
  }

  if (firstError !== null) {
    deps.logger.warn({ err: firstError, failed: report.failed }, 'some crash leftovers could not be removed');
  }
  const removed = report.tempFiles + report.orphanImages;
  if (removed === 0) deps.logger.debug('no crash leftovers found');
  else deps.logger.info({ ...report, files: removed }, `removed ${removed} crash leftover file(s), ${report.bytes} bytes`);
  return report;
}
