/** Picks the store for this process: embedded SQLite in the data dir, or PostgreSQL in hub mode. */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../clock.js';
import { SQLITE_FILE_NAME, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { openPostgresStore } from './postgres/index.js';
import { openSqliteStore } from './sqlite/index.js';
import type { Store } from './store.js';

export { createFileImageStore } from './files.js';
export { openSqliteStore, SchemaTooNewError } from './sqlite/index.js';
export { openPostgresStore } from './postgres/index.js';
export type { ImageStore } from './images.js';
export type { Store } from './store.js';

export { SQLITE_FILE_NAME } from '../config.js';

export async function openStore(config: Config, clock: Clock, logger?: Logger): Promise<Store> {
  if (config.databaseUrl !== null) return openPostgresStore({ url: config.databaseUrl, clock });
  await mkdir(config.dataDir, { recursive: true });
  return openSqliteStore({ file: path.join(config.dataDir, SQLITE_FILE_NAME), clock, logger });
}
