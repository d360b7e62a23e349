/** Idempotency-Key claims and stored responses, plus the small key/value meta table. */
import type { IdempotencyStore, MetaStore } from '../store.js';
import { idempotencyFromRow, type IdempotencyRowOf } from '../record-rows.js';
import { type Db, immediate, READ, run, toMs } from './db.js';

export function createIdempotencyStore(db: Db): IdempotencyStore {
  const find = db.prepare('SELECT * FROM idempotency WHERE caller_key = ? AND key = ?');
  const claim = db.prepare(
    `INSERT INTO idempotency (caller_key, key, request_hash, created_at, response) VALUES (?, ?, ?, ?, NULL)
     ON CONFLICT (caller_key, key) DO UPDATE SET
       request_hash = excluded.request_hash, created_at = excluded.created_at, response = NULL`,
  );
  // Only an in-flight claim is forgotten: a completed response must keep replaying.
  const abandon = db.prepare('DELETE FROM idempotency WHERE caller_key = ? AND key = ? AND response IS NULL');
  const expire = db.prepare('DELETE FROM idempotency WHERE created_at < ?');
  const abandonAll = db.prepare('DELETE FROM idempotency WHERE created_at < ? AND response IS NULL');

  return {
    begin: (record, expiredBefore) =>
      immediate(db, () => {
        const row = find.get(record.callerKey, record.key) as IdempotencyRowOf<number, string> | undefined;
        if (row && row.created_at >= toMs(expiredBefore)) {
          return { claimed: false as const, existing: idempotencyFromRow(row, READ) };
        }
        claim.run(record.callerKey, record.key, record.requestHash, toMs(record.createdAt));
        return { claimed: true as const };
      }),
    abandon: (callerKey, key) =>
      run(() => {
        abandon.run(callerKey, key);
      }),
    abandonInFlight: (before) => run(() => abandonAll.run(toMs(before)).changes),
    deleteExpired: (before) => run(() => expire.run(toMs(before)).changes),
  };
}

export function createMetaStore(db: Db): MetaStore {
  const get = db.prepare('SELECT value FROM meta WHERE key = ?');
  const set = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  return {
    get: (key) => run(() => (get.get(key) as { value: string } | undefined)?.value ?? null),
    set: (key, value) =>
      run(() => {
        set.run(key, value);
      }),
  };
}
