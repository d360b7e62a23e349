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

/**
 * Applies pending migrations, each in its own IMMEDIATE transaction with its schema_migrations
 * row. The version is re-read inside the transaction so two processes opening a fresh file at
 * once do not both apply the same step.
 */
export function migrate(
  db: Database.Database,
  file: string,
  clock: Clock,
  migrations: readonly Migration[] = MIGRATIONS,
): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const current = schemaVersion(db);
  if (current > known) throw new SchemaTooNewError(file, current, known);

  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      if (schemaVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, clock.now().getTime());
    }).immediate();
  }
}
