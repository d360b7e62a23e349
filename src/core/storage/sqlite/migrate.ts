import { renameSync, rmSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Clock } from '../../clock.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** Opening a database written by a newer TireWear must stop the app, never guess. */
export class SchemaTooNewError extends Error {
  constructor(file: string, found: number, known: number) {
    super(
      `Database ${file} has schema version ${found}, but this TireWear knows only up to ${known}. ` +
        'Update TireWear, or point it at another data directory.',
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

/**
 * A consistent copy of the database (VACUUM INTO: committed data only, compacted) before an
 * upgrade, so a shop that must go back to the version it came from can (an older TireWear refuses
 * a newer schema). Written beside the database under a temporary name, then renamed over an older
 * copy of the same schema. In memory: nothing to copy.
 */
function backUp(db: Database.Database, file: string, version: number): string | null {
  if (file === ':memory:' || file === '') return null;
  const target = backupFileName(file, version);
  const temp = `${target}.tmp`;
  rmSync(temp, { force: true });
  try {
    db.prepare('VACUUM INTO ?').run(temp);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return target;
}

/**
 * Applies pending migrations, each in its own IMMEDIATE transaction with its schema_migrations
 * row. The version is re-read inside the transaction so two processes opening a fresh file at
 * once do not both apply the same step. A database that already holds a schema is copied first
 * (backUp); a copy that cannot be made is reported, not fatal.
 */
export function migrate(
  db: Database.Database,
  file: string,
  clock: Clock,
  migrations: readonly Migration[] = MIGRATIONS,
): MigrationReport {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const current = schemaVersion(db);
  if (current > known) throw new SchemaTooNewError(file, current, known);

  const report: MigrationReport = { from: current, to: current, backup: null, backupError: null };
  if (current === known) return report;
  if (current > 0) {
    try {
      report.backup = backUp(db, file, current);
    } catch (error) {
      report.backupError = error instanceof Error ? error : new Error(String(error));
    }
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      if (schemaVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, clock.now().getTime());
    }).immediate();
  }
  report.to = schemaVersion(db);
  return report;
}
