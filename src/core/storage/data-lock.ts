/**
 * One server per data folder. SQLite itself copes with two processes, but two servers on one
 * folder would each run their own housekeeping, sweep each other's uploads in flight and cross
 * their settings.json saves. The lock is a file naming its owner (process and computer); one left
 * by a process that is gone (a crash, a power cut) is taken over. Hub mode keeps only
 * settings.json in its data folder and is not locked: its instances share the database anyway.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const LOCK_FILE_NAME = 'tirewear.lock';

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

function readOwner(file: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<Owner>;
    return Number.isInteger(owner.pid) && typeof owner.host === 'string' ? (owner as Owner) : null;
  } catch {
    return null; // unreadable or half-written (a crash while taking it): nobody's
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists, another user's
  }
}

/** Takes the data folder's lock, or throws DataDirInUseError naming who holds it; returns the release. */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE_NAME);
  mkdirSync(dataDir, { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname(), since: new Date().toISOString() }));
      } finally {
        closeSync(fd);
      }
      return () => {
        if (readOwner(file)?.pid === process.pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const owner = readOwner(file);
      if (owner && owner.host !== os.hostname()) {
        throw new DataDirInUseError(
          `The data folder ${dataDir} is in use by TireWear on the computer "${owner.host}" (since ${owner.since}). ` +
            `One folder serves one TireWear: give this one its own data folder. If that computer no longer runs TireWear, delete ${file}.`,
        );
      }
      if (owner && owner.pid !== process.pid && alive(owner.pid)) {
        throw new DataDirInUseError(
          `The data folder ${dataDir} is in use by another TireWear on this computer (process ${owner.pid}, since ${owner.since}): ` +
            'close it first (a second window, or npm run serve), or give this one its own data folder (TIREWEAR_DATA_DIR or --data-dir).',
        );
      }
      rmSync(file, { force: true }); // left by a process that is gone (or by this one): taken over
    }
  }
}
