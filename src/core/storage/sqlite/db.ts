/** Shared plumbing for the SQLite store: date columns, transactions, error mapping. */
import type Database from 'better-sqlite3';
import { AppError } from '../../errors.js';
import type { ColumnReader } from '../scan-columns.js';

export type Db = Database.Database;

export function toMs(date: Date): number;
export function toMs(date: Date | null): number | null;
export function toMs(date: Date | null): number | null {
  return date === null ? null : date.getTime();
}

export function fromMs(ms: number): Date;
export function fromMs(ms: number | null): Date | null;
export function fromMs(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}

/** How record-rows.ts and scan-columns.ts read SQLite's columns: times as epoch ms, JSON as text. */
export const READ: ColumnReader<number, string> = { time: (ms) => new Date(ms), json: (text): unknown => JSON.parse(text) };

/** What the caller is told for each SQLite failure that is the machine's, not the request's. */
const UNAVAILABLE_MESSAGES: Record<string, string> = {
  SQLITE_BUSY: 'The database is busy; try again shortly',
  SQLITE_LOCKED: 'The database is busy; try again shortly',
  SQLITE_FULL: 'The disk holding the database is full; free space on it, then try again (nothing was saved)',
  SQLITE_IOERR: 'The database could not be read or written (a disk error); try again, and check the disk if it goes on',
  SQLITE_CANTOPEN: 'The database file cannot be opened (moved, or its folder not allowed to this program)',
  SQLITE_READONLY: 'The database cannot be written (a read-only file or folder); TireWear needs to write its data folder',
  SQLITE_CORRUPT: 'The database file is damaged; stop TireWear and put back tirewear.db from a backup (the log names the file)',
  SQLITE_NOTADB: 'The database file is damaged; stop TireWear and put back tirewear.db from a backup (the log names the file)',
};
const UNAVAILABLE = new Set(Object.keys(UNAVAILABLE_MESSAGES));

function sqliteCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * A locked or full disk is the user's environment, not a bug: it becomes STORAGE_UNAVAILABLE (503)
 * so the caller may retry. Other errors pass through unchanged.
 */
export function mapError(error: unknown): unknown {
  const code = sqliteCode(error);
  const primary = code?.split('_').slice(0, 2).join('_');
  if (primary === undefined || !UNAVAILABLE.has(primary)) return error;
  return new AppError('STORAGE_UNAVAILABLE', UNAVAILABLE_MESSAGES[primary] ?? 'The database is unavailable; try again shortly', { cause: error });
}

/**
 * Runs `fn` synchronously inside BEGIN IMMEDIATE: the write lock is taken before the first read,
 * so a check-then-write is atomic across connections and processes, not only within this one.
 */
export function immediate<T>(db: Db, fn: () => T): Promise<T> {
  try {
    return Promise.resolve(db.transaction(fn).immediate());
  } catch (error) {
    return Promise.reject(mapError(error));
  }
}

/** A single statement or read: already atomic, only needs the error mapping and the async shape. */
export function run<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(mapError(error));
  }
}
