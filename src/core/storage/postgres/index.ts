/**
 * Hub mode: the Store on PostgreSQL. Several server instances open it against one
 * database; the migrations serialise themselves and every atomic rule holds across
 * processes because it is enforced by transactions and row locks, not in memory.
 */
import pg from 'pg';
import type { Clock } from '../../clock.js';
import type { Store } from '../store.js';
import { accountStore, apiKeyStore, licenseStore, sessionStore } from './accounts.js';
import { Db } from './db.js';
import { migrate } from './migrations.js';
import { scanStore } from './scans.js';
import { idempotencyStore, usageStore } from './usage.js';

export interface PostgresStoreOptions {
  /** postgres://user:pass@host:port/db; `?options=-c search_path=x` selects a schema. */
  url: string;
  /** Kept for parity with the SQLite factory; the store itself takes times from its callers. */
  clock?: Clock;
  /** Pool size per instance. */
  maxConnections?: number;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    // A database that does not answer becomes STORAGE_UNAVAILABLE in seconds, not at the TCP timeout.
    connectionTimeoutMillis: 5_000,
  });
  // An idle client whose server went away emits 'error'; the next query reports it instead.
  pool.on('error', () => undefined);
  const db = new Db(pool);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    kind: 'postgres',
    accounts: accountStore(db),
    sessions: sessionStore(db),
    apiKeys: apiKeyStore(db),
    usage: usageStore(db),
    scans: scanStore(db),
    licenses: licenseStore(db),
    idempotency: idempotencyStore(db),
    meta: {
      async get(key) {
        const [row] = await db.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key]);
        return row?.value ?? null;
      },
      async set(key, value) {
        await db.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [key, value]);
      },
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async createdAt() {
      const rows = await db.query<{ at: Date | null }>('SELECT MIN(applied_at) AS at FROM schema_migrations');
      return rows[0]?.at ?? null;
    },
    async close() {
      await pool.end();
    },
  };
}
