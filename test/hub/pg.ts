/**
 * PostgreSQL for tests: each caller gets its own fresh schema in the database named by
 * TIREWEAR_TEST_DATABASE_URL (scripts/pg-test-setup.sh prints one), so test files and
 * repeated runs never see each other's rows. Suites skip when the variable is unset.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.TIREWEAR_TEST_DATABASE_URL ?? '';

export const SKIP_REASON = 'TIREWEAR_TEST_DATABASE_URL is not set: PostgreSQL tests skipped (run scripts/pg-test-setup.sh and export the URL it prints)';

if (!TEST_DATABASE_URL) console.warn(SKIP_REASON);

export interface TestSchema {
  /** Connection URL whose search_path is the fresh schema. */
  url: string;
  schema: string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function freshSchema(): Promise<TestSchema> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    schema,
    drop: () => admin((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined),
  };
}
