/** The embedded store: one SQLite file opened with better-sqlite3. */
import path from 'node:path';
import Database from 'better-sqlite3';
import { type Clock, systemClock } from '../../clock.js';
import type { Logger } from '../../logger.js';
import { sleepSync } from '../../sleep-sync.js';
import type { Store } from '../store.js';
import { createAccountStore, createApiKeyStore, createSessionStore } from './accounts.js';
import { run } from './db.js';
import { createIdempotencyStore, createMetaStore } from './idempotency.js';
import { createLicenseStore } from './licenses.js';
import { backUpBeforeUpgrade, migrate, type MigrationReport } from './migrate.js';
import { createScanStore } from './scans.js';
import { createUsageStore } from './usage.js';

export { SchemaTooNewError } from './migrate.js';

export interface SqliteStoreOptions {
  file: string;
  clock?: Clock;
  /** How long a writer waits for another connection's lock before STORAGE_UNAVAILABLE. */
  busyTimeoutMs?: number;
  /** Told of a schema upgrade and of the copy kept of the database before it. */
  logger?: Pick<Logger, 'info' | 'warn'>;
}

/**
 * Runs `step` again while it fails with SQLITE_BUSY (any extended code), for up to `timeoutMs`,
 * pausing `pauseMs` between tries (synchronously: this is start-up code); then the last error.
 */
export function untilNotBusy<T>(step: () => T, timeoutMs: number, pauseMs = 20, sleep: (ms: number) => void = sleepSync): T {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return step();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw error;
      sleep(pauseMs);
    }
  }
}

/**
 * WAL + synchronous=NORMAL: a committed transaction is in the WAL before commit returns, so a
 * charged scan survives a crash or kill -9 of the app. Only a power loss or OS crash can drop
 * the last few commits (the WAL is fsynced at checkpoints, not on every commit) — accepted
 * for a shop desktop in exchange for a write path that does not fsync per scan.
 */
const ROLLED_BACK = new Error('write probe rolled back');

/** One real write in a transaction that is then rolled back: nothing changes on disk. */
function probeWrite(db: Database.Database): void {
  try {
    db.transaction(() => {
      db.prepare("INSERT INTO meta (key, value) VALUES ('write_probe', '') ON CONFLICT (key) DO NOTHING").run();
      throw ROLLED_BACK;
    })();
  } catch (error) {
    if (error !== ROLLED_BACK) throw error;
  }
}

function reportUpgrade(upgrade: MigrationReport, options: SqliteStoreOptions): void {
  const { from, to, backup, backupError } = upgrade;
  if (from === 0 || to === from || !options.logger) return;
  if (backup) {
    options.logger.info(
      { from, to, backup },
      `upgraded the database from schema ${from} to ${to}; the database as it was is kept in ${backup} ` +
        `(to go back to the TireWear you had: stop TireWear, move ${path.basename(options.file)} and its -wal and -shm ` +
        'files aside, and put that copy in their place; scans made since are then lost)',
    );
  } else {
    options.logger.warn(
      { from, to, err: backupError },
      `upgraded the database from schema ${from} to ${to}; no copy of it as it was could be kept, so the TireWear you had cannot open it again`,
    );
  }
}

export function openSqliteStore(options: SqliteStoreOptions): Store {
  const db = new Database(options.file);
  try {
    const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
    // First, so that switching to WAL and migrating wait for another process opening the same file.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // SQLite answers SQLITE_BUSY at once, without the busy handler, where waiting could deadlock
    // (e.g. while another process opening the same new file switches it to WAL or recovers its
    // WAL), so opening retries those two steps itself within the same timeout.
    untilNotBusy(() => db.pragma('journal_mode = WAL'), busyTimeoutMs);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    const before = untilNotBusy(() => backUpBeforeUpgrade(db, options.file), busyTimeoutMs);
    const to = untilNotBusy(() => migrate(db, options.file, options.clock ?? systemClock), busyTimeoutMs);
    reportUpgrade({ ...before, to }, options);
    // A read-only file opens, switches to WAL and reads; only a write fails. Found now, not as
    // every request's 503 from a server that says it is fine.
    untilNotBusy(() => probeWrite(db), busyTimeoutMs);
  } catch (error) {
    db.close();
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_READONLY')) {
      throw new Error(
        `${options.file} cannot be written (the file, its folder or its -wal/-shm files are read-only, or belong to another user): ` +
          'TireWear needs to write its data folder',
        { cause: error },
      );
    }
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new Error(`${options.file} is not a readable TireWear database (damaged, or another kind of file)`, {
        cause: error,
      });
    }
    throw error;
  }
  const ping = db.prepare('SELECT 1');
  const created = db.prepare('SELECT MIN(applied_at) AS at FROM schema_migrations');
  return {
    kind: 'sqlite',
    accounts: createAccountStore(db),
    sessions: createSessionStore(db),
    apiKeys: createApiKeyStore(db),
    usage: createUsageStore(db),
    scans: createScanStore(db),
    licenses: createLicenseStore(db),
    idempotency: createIdempotencyStore(db),
    meta: createMetaStore(db),
    ping: () =>
      run(() => {
        ping.get();
      }),
    createdAt: () =>
      run(() => {
        const at = (created.get() as { at: number | null }).at;
        return at === null ? null : new Date(at);
      }),
    close: () =>
      run(() => {
        if (db.open) db.close();
      }),
  };
}
