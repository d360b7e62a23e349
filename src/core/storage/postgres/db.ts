/**
 * A thin layer over the pg Pool: queries outside a transaction, and transactions
 * that are retried when PostgreSQL reports a deadlock or a serialization failure
 * (both mean "nothing happened, try again"). Connection trouble becomes
 * STORAGE_UNAVAILABLE so a caller sees 503, never a driver message.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { AppError, isAppError } from '../../errors.js';
import type { ColumnReader } from '../scan-columns.js';

/** How record-rows.ts and scan-columns.ts read PostgreSQL's columns: the driver gives Dates and parsed jsonb. */
export const READ: ColumnReader<Date, unknown> = { time: (at) => at, json: (value) => value };

export interface Queryable {
  query<R extends QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
}

const RETRYABLE = new Set(['40001', '40P01']);
const CONNECTION_CLASSES = ['08', '57P'];

function storageError(error: unknown): unknown {
  if (isAppError(error)) return error;
  const code = (error as { code?: string }).code ?? '';
  const connectionTrouble =
    CONNECTION_CLASSES.some((prefix) => code.startsWith(prefix)) ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE'].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test((error as Error).message ?? '');
  if (connectionTrouble) {
    return new AppError('STORAGE_UNAVAILABLE', 'The database is unavailable; try again shortly', { cause: error });
  }
  return error;
}

function wrap(client: Pool | PoolClient): Queryable {
  return {
    async query<R extends QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
      try {
        return (await client.query<R>(sql, params)).rows;
      } catch (error) {
        throw storageError(error);
      }
    },
  };
}

export class Db implements Queryable {
  constructor(readonly pool: Pool) {}

  query<R extends QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return wrap(this.pool).query<R>(sql, params);
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        throw storageError(error);
      }
      try {
        await client.query('BEGIN');
        const result = await work(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (error as { code?: string }).code ?? '';
        if (RETRYABLE.has(code) && attempt < 8) continue;
        throw storageError(error);
      } finally {
        client.release();
      }
    }
  }
}

/** pg returns bigint and count(*) as strings; every count here fits a JS number. */
export function num(value: string | number | null): number {
  return value === null ? 0 : Number(value);
}
