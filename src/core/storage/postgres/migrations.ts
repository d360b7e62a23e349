/**
 * PostgreSQL schema, as numbered migrations. Hub instances start at the same time
 * behind a load balancer, so the runner takes a session advisory lock: one instance
 * applies what is missing while the others wait, then find nothing left to do.
 */
import type { Pool, PoolClient } from 'pg';
import { vehicleKey } from '../../../shared/vehicle.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** A step SQL alone cannot do (a backfill computed in JS), run after `sql` in the same transaction. */
  run?(client: PoolClient): Promise<void>;
}

/** Fills vehicle_key of existing scans, a thousand distinct vehicles a statement (the key is JS's, as the stores write it). */
async function backfillVehicleKeys(client: PoolClient): Promise<void> {
  const { rows } = await client.query<{ vehicle: string }>('SELECT DISTINCT vehicle FROM scans WHERE vehicle IS NOT NULL');
  for (let i = 0; i < rows.length; i += 1000) {
    const batch = rows.slice(i, i + 1000);
    await client.query(
      `UPDATE scans SET vehicle_key = v.key
       FROM unnest($1::text[], $2::text[]) AS v(vehicle, key) WHERE scans.vehicle = v.vehicle`,
      [batch.map((r) => r.vehicle), batch.map((r) => vehicleKey(r.vehicle))],
    );
  }
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        email text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        pro_expires_at timestamptz,
        pack_credit integer NOT NULL DEFAULT 0 CHECK (pack_credit >= 0)
      );
      CREATE TABLE sessions (
        token_hash text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX sessions_expires ON sessions (expires_at);
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        name text NOT NULL,
        prefix text NOT NULL,
        hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_account ON api_keys (account_id, created_at);
      CREATE TABLE usage_counters (
        subject text NOT NULL,
        "window" text NOT NULL,
        used integer NOT NULL DEFAULT 0,
        PRIMARY KEY (subject, "window")
      );
      CREATE TABLE reservations (
        id text PRIMARY KEY,
        source text NOT NULL CHECK (source IN ('allowance', 'pack', 'unmetered')),
        subject text NOT NULL,
        "window" text NOT NULL,
        pack_account_id text,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX reservations_subject ON reservations (subject, "window");
      CREATE INDEX reservations_pack ON reservations (pack_account_id) WHERE source = 'pack';
      CREATE SEQUENCE scan_change_seq;
      CREATE TABLE scans (
        id text COLLATE "C" PRIMARY KEY,
        account_id text,
        api_key_id text,
        source text NOT NULL,
        created_at timestamptz NOT NULL,
        vehicle text,
        vehicle_folded text,
        position text,
        wear text NOT NULL,
        result jsonb NOT NULL,
        image jsonb NOT NULL,
        measurement_mm double precision,
        measured_at timestamptz,
        deleted_at timestamptz,
        change_seq bigint NOT NULL
      );
      CREATE INDEX scans_account_created ON scans (account_id, created_at DESC, id DESC);
      CREATE INDEX scans_change_seq ON scans (change_seq);
      CREATE TABLE licenses (
        code_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        kind text NOT NULL CHECK (kind IN ('pack', 'pro')),
        scans integer,
        expires_at timestamptz,
        redeemed_at timestamptz NOT NULL
      );
      CREATE INDEX licenses_account ON licenses (account_id, redeemed_at);
      CREATE TABLE idempotency (
        caller_key text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        response jsonb,
        PRIMARY KEY (caller_key, key)
      );
      CREATE INDEX idempotency_created ON idempotency (created_at);
      CREATE TABLE meta (
        key text PRIMARY KEY,
        value text NOT NULL
      );
    `,
  },
  {
    version: 2,
    // A hub lists one shop's scans (ScanFilter.apiKeyId) without walking the whole chain's history.
    name: 'scans by API key',
    sql: 'CREATE INDEX scans_account_key_created ON scans (account_id, api_key_id, created_at DESC, id DESC)',
  },
  {
    version: 3,
    // A pack scan charged while free scans were held gets one of them back if it is given back
    // (usage.ts release); as SQLite's 003_pack_refunds.
    name: 'pack refunds',
    sql: `
      ALTER TABLE reservations ADD COLUMN free_held boolean NOT NULL DEFAULT false;
      CREATE TABLE pack_refundable (
        reservation_id text PRIMARY KEY,
        subject text NOT NULL,
        "window" text NOT NULL,
        account_id text NOT NULL,
        held_at timestamptz NOT NULL
      );
      CREATE INDEX pack_refundable_window ON pack_refundable (subject, "window", held_at);
    `,
  },
  {
    version: 4,
    // Issue 42: the plate key beside the plate (search, the vehicle view), and corrections with
    // their history; as SQLite's 004_vehicle_key_and_corrections. Existing rows are keyed by run().
    name: 'vehicle key and corrections',
    sql: `
      ALTER TABLE scans ADD COLUMN vehicle_key text COLLATE "C";
      ALTER TABLE scans ADD COLUMN edited_at timestamptz;
      ALTER TABLE scans ADD COLUMN changes jsonb NOT NULL DEFAULT '[]'::jsonb;
      CREATE INDEX scans_account_vehicle_key ON scans (account_id, vehicle_key, created_at DESC, id DESC);
    `,
    run: backfillVehicleKeys,
  },
];

/** Any 64-bit constant works; this one spells "TIREWEAR" loosely and is only ours. */
const MIGRATION_LOCK = 7_146_908_217;

/** A database migrated by a newer TireWear: this instance must not guess at its schema. */
export class PostgresSchemaTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `The PostgreSQL database has schema version ${found}, but this TireWear knows only up to ${known}. ` +
        'Run the same TireWear version on every hub instance.',
    );
    this.name = 'PostgresSchemaTooNewError';
  }
}

/** Applies the missing migrations, each in its own transaction; returns the versions applied. */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const done = new Set(rows.map((row) => row.version));
      const known = Math.max(0, ...migrations.map((migration) => migration.version));
      const found = Math.max(0, ...done);
      if (found > known) throw new PostgresSchemaTooNewError(found, known);
      const applied: number[] = [];
      for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await migration.run?.(client);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
        applied.push(migration.version);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
