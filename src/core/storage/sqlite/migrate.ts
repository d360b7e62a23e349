import { rmSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Clock } from '../../clock.js';
import { renameRetryingSync } from '../files.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** Opening a database written by a newer TireWear must stop the app, never guess. */
export class SchemaTooNewError extends Error {
  constructor(file: string, found: number, known: number) {
    super(
      `Database ${file} has schema version ${found}, but this TireWear knows only up to ${known}. ` + 'Update TireWear, or point it at another data directory.',
    );
    this.name = 'SchemaTooNewError';
  }
}

export function schemaVersion(db: Database.Database): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
  return row.version ?? 0;
}

/** What opening did to the schema: `from` → `to`; `backup` names the copy kept of a database that held one. */
export interface MigrationReport {
  from: number;
  to: number;
  /** The copy of the database as it was before the first step (null: nothing to copy, or `backupError`). */
  backup: string | null;
  /** Why no copy could be made (the upgrade went ahead: a full disk fails its first step anyway). */
  backupError: Error | null;
}

/** `tirewear.db.schema-2.bak`: the database as schema 2 left it, before this version upgraded it. */
export function backupFileName(file: string, version: number): string {
  return `${file}.schema-${version}.bak`;
}

function knownVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/** The schema's version, 0 for a new file (no schema_migrations table yet). */
function currentVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  return table ? schemaVersion(db) : 0;
}

/**
 * Before an upgrade of a database that holds a schema: a consistent copy of it (VACUUM INTO:
 * committed data only, compacted), so a shop that must go back to the version it came from can
 * (an older TireWear refuses a newer schema). Written beside the database under a temporary name,
 * then renamed over an older copy of the same schema (retried on Windows as renameRetrying is).
 * Once, before `migrate`, which opening may retry: a retry after a step had committed would copy
 * a half-upgraded schema. A copy that cannot be made is reported, not fatal. In memory, a new
 * file, a schema that is current or newer: nothing to copy.
 */
export function backUpBeforeUpgrade(db: Database.Database, file: string, migrations: readonly Migration[] = MIGRATIONS): Omit<MigrationReport, 'to'> {
  const from = currentVersion(db);
  const report = { from, backup: null as string | null, backupError: null as Error | null };
  if (from === 0 || from >= knownVersion(migrations) || file === ':memory:' || file === '') return report;
  const target = backupFileName(file, from);
  const temp = `${target}.tmp`;
  try {
    rmSync(temp, { force: true });
    db.prepare('VACUUM INTO ?').run(temp);
    renameRetryingSync(temp, target);
    report.backup = target;
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // what cannot be removed is named by the error below
    }
    report.backupError = error instanceof Error ? error : new Error(String(error));
  }
  return report;
}

/**
 * Applies pending migrations, each in its own IMMEDIATE transaction with its schema_migrations
 * row. The version is re-read inside the transaction so two processes opening a fresh file at
 * once do not both apply the same step. Returns the version reached.
 */
export function migrate(db: Database.Database, file: string, clock: Clock, migrations: readonly Migration[] = MIGRATIONS): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const known = knownVersion(migrations);
  const current = schemaVersion(db);
  if (current > known) throw new SchemaTooNewError(file, current, known);
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      if (schemaVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      migration.run?.(db);
      record.run(migration.version, migration.name, clock.now().getTime());
    }).immediate();
  }
  return schemaVersion(db);
}
