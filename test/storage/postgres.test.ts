/**
 * The PostgreSQL store: the shared conformance suite, plus what only matters when
 * several hub instances (separate pools, separate processes) share one database.
 * The conformance tests share one schema emptied before each test (a schema and its
 * migrations per test would cost far more than the tests); the rest get their own.
 */
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { Db, type Queryable } from '../../src/core/storage/postgres/db.js';
import { scanStore } from '../../src/core/storage/postgres/scans.js';
import { idempotencyStore } from '../../src/core/storage/postgres/usage.js';
import { MIGRATIONS, migrate } from '../../src/core/storage/postgres/migrations.js';
import { openPostgresStore } from '../../src/core/storage/postgres/index.js';
import type { Store } from '../../src/core/storage/store.js';
import { freshSchema, TEST_DATABASE_URL, type TestSchema } from '../hub/pg.js';
import { makeScan } from '../support/store.js';
import { runStoreConformance } from './conformance.js';

async function emptyAll(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
       WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`,
    );
    // DELETE, not TRUNCATE: on tables this small it is many times faster. Accounts last (foreign keys).
    const tables = rows.map((row) => row.name).sort((a, b) => Number(a === 'accounts') - Number(b === 'accounts'));
    for (const table of tables) await client.query(`DELETE FROM ${table}`);
    await client.query('ALTER SEQUENCE scan_change_seq RESTART');
  } finally {
    await client.end();
  }
}

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL store', () => {
  let shared: TestSchema | null = null;
  afterAll(async () => {
    await shared?.drop();
  });
  runStoreConformance('postgres', async () => {
    shared ??= await freshSchema();
    const store = await openPostgresStore({ url: shared.url, maxConnections: 4 });
    await emptyAll(shared.url);
    return { store, cleanup: () => store.close() };
  });

  describe('several instances on one database', () => {
    let schema: TestSchema | null = null;
    const opened: Store[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await schema?.drop();
      schema = null;
    });
    async function instances(count: number): Promise<Store[]> {
      schema ??= await freshSchema();
      const url = schema.url;
      const stores = await Promise.all(Array.from({ length: count }, () => openPostgresStore({ url, maxConnections: 4 })));
      opened.push(...stores);
      return stores;
    }

    it('applies each migration once when instances start together', async () => {
      await instances(4);
      const client = new pg.Client({ connectionString: schema!.url });
      await client.connect();
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      await client.end();
      expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    });

    it('applies a later migration to a database made by an earlier version, and refuses a newer one', async () => {
      const [store] = await instances(1);
      await store!.meta.set('kept', 'yes');
      const pool = new pg.Pool({ connectionString: schema!.url, max: 1 });
      try {
        const next = { version: MIGRATIONS.length + 1, name: 'test column', sql: 'ALTER TABLE meta ADD COLUMN note text' };
        expect(await migrate(pool, [...MIGRATIONS, next])).toEqual([next.version]);
        expect(await migrate(pool, [...MIGRATIONS, next])).toEqual([]);
        expect(await store!.meta.get('kept')).toBe('yes');
        await expect(openPostgresStore({ url: schema!.url })).rejects.toThrow(
          `schema version ${next.version}, but this TireWear knows only up to ${MIGRATIONS.length}`,
        );
      } finally {
        await pool.end();
      }
    });

    it('migration 4 gives the scans of a database of schema 3 their plate keys', async () => {
      schema ??= await freshSchema();
      const pool = new pg.Pool({ connectionString: schema.url, max: 1 });
      try {
        expect(
          await migrate(
            pool,
            MIGRATIONS.filter((m) => m.version <= 3),
          ),
        ).toEqual([1, 2, 3]);
        const plain = makeScan();
        const rows: Array<[string, string | null]> = [
          ['s1', 'KA-TW-204'],
          ['s2', 'ka tw 204'],
          ['s3', null],
          ['s4', '---'],
        ];
        for (const [i, [id, vehicle]] of rows.entries()) {
          await pool.query(
            `INSERT INTO scans (id, account_id, api_key_id, source, created_at, vehicle, vehicle_folded, position, wear, result, image,
               measurement_mm, measured_at, deleted_at, change_seq) VALUES ($1, 'a1', NULL, 'session', $2, $3, $4, NULL, 'good', $5, $6, NULL, NULL, NULL, $7)`,
            [id, new Date(Date.UTC(2026, 10, 1, i)), vehicle, vehicle?.toLowerCase() ?? null, JSON.stringify(plain.result), JSON.stringify(plain.image), i + 1],
          );
        }
        expect(await migrate(pool)).toEqual([4]);
        const { rows: keyed } = await pool.query('SELECT id, vehicle_key, changes, edited_at FROM scans ORDER BY id');
        expect(keyed).toEqual([
          { id: 's1', vehicle_key: 'KATW204', changes: [], edited_at: null },
          { id: 's2', vehicle_key: 'KATW204', changes: [], edited_at: null },
          { id: 's3', vehicle_key: null, changes: [], edited_at: null },
          { id: 's4', vehicle_key: null, changes: [], edited_at: null },
        ]);
      } finally {
        await pool.end();
      }
      const [store] = await instances(1);
      const found = await store!.scans.list({ accountId: 'a1', limit: 10, vehicle: 'KA TW 204' });
      expect(found.items.map((s) => s.id)).toEqual(['s2', 's1']);
    });

    it('grants exactly the units left when reserves race across instances', async () => {
      const [a, b, c] = await instances(3);
      await a!.accounts.create({ id: 'acct1', email: 'shop@example.com', passwordHash: 'x', createdAt: new Date() });
      const request = (i: number) => ({
        id: `r${i}`,
        subject: 'acct:acct1',
        window: 'month:2026-11',
        limit: 10,
        packAccountId: 'acct1',
        unmetered: false,
        now: new Date(),
      });
      const granted = await Promise.all(Array.from({ length: 24 }, (_, i) => [a, b, c][i % 3]!.usage.reserve(request(i))));
      expect(granted.filter((reservation) => reservation !== null)).toHaveLength(10);
      expect(await c!.usage.usage('acct:acct1', 'month:2026-11')).toEqual({ used: 0, held: 10 });
    });

    it('keeps change sequences strictly increasing across concurrent writers', async () => {
      const [a, b] = await instances(2);
      const scans = Array.from({ length: 20 }, () => makeScan());
      await Promise.all(scans.map((scan, i) => (i % 2 ? a! : b!).scans.commit({ scan, reservation: null, idempotency: null })));
      const changes = await a!.scans.changesSince(0, 100);
      expect(changes).toHaveLength(20);
      const seqs = changes.map((change) => change.seq);
      expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(20);
    });

    it('merges the same pushed scan from two instances into one record', async () => {
      const [a, b] = await instances(2);
      const scan = makeScan({ source: 'sync' });
      const measured = { ...scan, measurementMm: 4.2, measuredAt: new Date('2026-11-21T13:00:00Z') };
      await Promise.all([a!.scans.upsertSynced(scan), b!.scans.upsertSynced(measured), a!.scans.upsertSynced(scan)]);
      const stored = await b!.scans.get(scan.id);
      expect(stored?.measurementMm).toBe(4.2);
      expect(await a!.scans.changesSince(0, 10)).toHaveLength(1);
    });

    it('the office deleting or editing a scan while its shop pushes a change to it takes the locks in one order: no deadlock', async () => {
      schema ??= await freshSchema();
      await instances(1); // migrated
      const pools = [new pg.Pool({ connectionString: schema.url, max: 2 }), new pg.Pool({ connectionString: schema.url, max: 2 })];
      let deadlocks = 0;
      class Counting extends Db {
        override transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
          return super.transaction((tx) =>
            work({
              query: (sql, params) =>
                tx.query(sql, params).catch((error: unknown) => {
                  if ((error as { code?: string }).code === '40P01') deadlocks++;
                  throw error;
                }) as never,
            }),
          );
        }
      }
      const [office, shop] = pools.map((pool) => scanStore(new Counting(pool)));
      try {
        for (let round = 0; round < 10; round++) {
          const scan = makeScan({ source: 'sync' });
          await shop!.upsertSynced(scan);
          const at = new Date(Date.UTC(2026, 10, 25, 9, round));
          await Promise.all([
            round % 2 ? office!.markDeleted(scan.id, at) : office!.setMeasurement(scan.id, 3.3, at),
            shop!.upsertSynced({ ...scan, measurementMm: 4.4, measuredAt: new Date(at.getTime() + 1000) }, { apiKeyId: null }),
          ]);
        }
        expect(deadlocks).toBe(0);
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
    });

    it('an idempotency claim whose row vanishes between its statements (abandoned on another instance) is claimed again', async () => {
      schema ??= await freshSchema();
      const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
      const [other] = await instances(1);
      try {
        const record = { callerKey: 'acct:a', key: 'k1', requestHash: 'h', createdAt: new Date('2026-11-25T08:00:00Z') };
        await other!.idempotency.begin(record, new Date(0)); // another instance's request holds the key
        // this instance's claim: the row is abandoned over there right after its INSERT found it taken
        let vanished = false;
        class Racy extends Db {
          override transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
            return super.transaction((tx) =>
              work({
                query: async (sql, params) => {
                  const rows = await tx.query(sql, params);
                  if (!vanished && sql.includes('UPDATE idempotency')) {
                    vanished = true;
                    await other!.idempotency.abandon(record.callerKey, record.key);
                  }
                  return rows as never;
                },
              }),
            );
          }
        }
        const claim = await idempotencyStore(new Racy(pool)).begin({ ...record, requestHash: 'h2' }, new Date(0));
        expect(vanished).toBe(true);
        expect(claim).toEqual({ claimed: true });
      } finally {
        await pool.end();
      }
    });
  });
});

describe('PostgreSQL connection trouble', () => {
  it('is STORAGE_UNAVAILABLE (503), not a driver message', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody:x@127.0.0.1:1/none', connectionTimeoutMillis: 2_000 });
    try {
      const error = await new Db(pool).query('SELECT 1').catch((caught: unknown) => caught);
      expect(isAppError(error) && error.code).toBe('STORAGE_UNAVAILABLE');
      expect((error as Error).message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      await pool.end();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('recovers once the database drops its connections (a restart, a failover)', async () => {
    const schema = await freshSchema();
    const url = new URL(schema.url);
    const name = `tw_${Math.random().toString(36).slice(2, 10)}`;
    url.searchParams.set('application_name', name);
    const store = await openPostgresStore({ url: url.toString(), maxConnections: 2 });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await store.meta.set('before', '1');
      const cut = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
      expect(cut.rowCount).toBeGreaterThan(0);
      let answered = false;
      for (let attempt = 0; attempt < 3 && !answered; attempt++) {
        answered = await store.meta.get('before').then(
          (value) => value === '1',
          (error: unknown) => {
            expect(isAppError(error) && error.code).toBe('STORAGE_UNAVAILABLE');
            return false;
          },
        );
      }
      expect(answered).toBe(true);
    } finally {
      await admin.end();
      await store.close();
      await schema.drop();
    }
  });
});
