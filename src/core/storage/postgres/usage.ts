/**
 * Metering and idempotency claims on PostgreSQL. Exactness across hub instances
 * comes from row locks: every reserve for a (subject, window) locks that window's
 * counter row first (created on demand), and pack reservations also lock the
 * account row, always in that order, so concurrent reserves queue instead of
 * both seeing the last free unit.
 */
import { REFUNDABLE_KEEP_MS, type IdempotencyStore, type Reservation, type UsageStore } from '../store.js';
import { idempotencyFromRow, type IdempotencyRowOf } from '../record-rows.js';
import { num, READ, type Db, type Queryable } from './db.js';

async function lockCounter(tx: Queryable, subject: string, window: string): Promise<number> {
  await tx.query('INSERT INTO usage_counters (subject, "window", used) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING', [subject, window]);
  const [row] = await tx.query<{ used: number }>('SELECT used FROM usage_counters WHERE subject = $1 AND "window" = $2 FOR UPDATE', [subject, window]);
  return row!.used;
}

async function hold(tx: Queryable, reservation: Reservation, packAccountId: string | null, now: Date, freeHeld = false): Promise<Reservation> {
  await tx.query(
    `INSERT INTO reservations (id, source, subject, "window", pack_account_id, created_at, free_held)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [reservation.id, reservation.source, reservation.subject, reservation.window, packAccountId, now, freeHeld],
  );
  return reservation;
}

export function usageStore(db: Db): UsageStore {
  return {
    reserve(request) {
      return db.transaction(async (tx) => {
        const base = { id: request.id, subject: request.subject, window: request.window };
        const used = await lockCounter(tx, request.subject, request.window);
        if (request.unmetered) return hold(tx, { ...base, source: 'unmetered' }, null, request.now);

        const [held] = await tx.query<{ n: string }>(
          // holds that will add to used on commit: pro ones (unmetered) too, as in SQLite and usage()
          `SELECT count(*) AS n FROM reservations WHERE subject = $1 AND "window" = $2 AND source IN ('allowance', 'unmetered')`,
          [request.subject, request.window],
        );
        if (used + num(held!.n) < request.limit) {
          return hold(tx, { ...base, source: 'allowance' }, null, request.now);
        }
        if (request.packAccountId === null) return null;

        const [account] = await tx.query<{ pack_credit: number }>('SELECT pack_credit FROM accounts WHERE id = $1 FOR UPDATE', [request.packAccountId]);
        if (!account) return null;
        const [packHeld] = await tx.query<{ n: string }>(`SELECT count(*) AS n FROM reservations WHERE source = 'pack' AND pack_account_id = $1`, [
          request.packAccountId,
        ]);
        if (account.pack_credit - num(packHeld!.n) <= 0) return null;
        return hold(tx, { ...base, source: 'pack' }, request.packAccountId, request.now, num(held!.n) > 0);
      });
    },
    async release(reservationId) {
      await db.transaction(async (tx) => {
        const [row] = await tx.query<{ source: string; subject: string; window: string }>(
          'DELETE FROM reservations WHERE id = $1 RETURNING source, subject, "window"',
          [reservationId],
        );
        if (row?.source !== 'allowance') return;
        // the free scan given back goes to the oldest pack hold of the month (as in SQLite): the
        // counter row's lock orders this after any reserve deciding on the same month
        await lockCounter(tx, row.subject, row.window);
        const promoted = await tx.query(
          `UPDATE reservations SET source = 'allowance', pack_account_id = NULL, free_held = false
           WHERE id = (SELECT id FROM reservations WHERE subject = $1 AND "window" = $2 AND source = 'pack'
                       ORDER BY created_at, id COLLATE "C" LIMIT 1 FOR UPDATE SKIP LOCKED)
           RETURNING id`,
          [row.subject, row.window],
        );
        if (promoted.length > 0) return;
        // no pack hold in flight: the oldest pack scan of the month charged while free scans were
        // held gets its credit back and counts as a free scan (as in SQLite). A pack commit still
        // open on another instance is not seen yet: the free scan then goes back to the month.
        // Lock order as in reserve: the counter row, then the account row.
        const [charged] = await tx.query<{ account_id: string }>(
          `DELETE FROM pack_refundable WHERE reservation_id = (
             SELECT reservation_id FROM pack_refundable WHERE subject = $1 AND "window" = $2
             ORDER BY held_at, reservation_id COLLATE "C" LIMIT 1 FOR UPDATE SKIP LOCKED)
           RETURNING account_id`,
          [row.subject, row.window],
        );
        if (!charged) return;
        await tx.query('UPDATE accounts SET pack_credit = pack_credit + 1 WHERE id = $1', [charged.account_id]);
        await tx.query('UPDATE usage_counters SET used = used + 1 WHERE subject = $1 AND "window" = $2', [row.subject, row.window]);
      });
    },
    async usage(subject, window) {
      const [row] = await db.query<{ used: number | null; held: string }>(
        `SELECT (SELECT used FROM usage_counters WHERE subject = $1 AND "window" = $2) AS used,
                (SELECT count(*) FROM reservations WHERE subject = $1 AND "window" = $2 AND source <> 'pack') AS held`,
        [subject, window],
      );
      return { used: row!.used ?? 0, held: num(row!.held) };
    },
    async packBalance(accountId) {
      // One statement: one snapshot, so a commit cannot land between the credit and the holds.
      const [row] = await db.query<{ credit: number | null; held: string }>(
        `SELECT (SELECT pack_credit FROM accounts WHERE id = $1) AS credit,
                (SELECT count(*) FROM reservations WHERE pack_account_id = $1 AND source = 'pack') AS held`,
        [accountId],
      );
      return { credit: row!.credit ?? 0, held: num(row!.held) };
    },
    async expireReservations(before) {
      // records of pack charges outlive their month's last possible refund: gone with it (as in SQLite)
      await db.query('DELETE FROM pack_refundable WHERE held_at < $1', [new Date(before.getTime() - REFUNDABLE_KEEP_MS)]);
      const rows = await db.query('DELETE FROM reservations WHERE created_at < $1 RETURNING id', [before]);
      return rows.length;
    },
  };
}

export function idempotencyStore(db: Db): IdempotencyStore {
  return {
    begin(record, expiredBefore) {
      return db.transaction(async (tx) => {
        const params = [record.callerKey, record.key, record.requestHash, record.createdAt];
        const inserted = await tx.query(
          `INSERT INTO idempotency (caller_key, key, request_hash, created_at, response)
           VALUES ($1, $2, $3, $4, NULL) ON CONFLICT DO NOTHING RETURNING key`,
          params,
        );
        if (inserted.length === 1) return { claimed: true as const };
        const replaced = await tx.query(
          `UPDATE idempotency SET request_hash = $3, created_at = $4, response = NULL
           WHERE caller_key = $1 AND key = $2 AND created_at < $5 RETURNING key`,
          [...params, expiredBefore],
        );
        if (replaced.length === 1) return { claimed: true as const };
        const [existing] = await tx.query<IdempotencyRowOf<Date, unknown>>('SELECT * FROM idempotency WHERE caller_key = $1 AND key = $2', [
          record.callerKey,
          record.key,
        ]);
        // gone between the statements (abandoned or swept on another instance): claim it again
        // from the start, as a serialization failure is (Db.transaction retries those)
        if (!existing) throw Object.assign(new Error('idempotency claim vanished; retrying'), { code: '40001' });
        return { claimed: false as const, existing: idempotencyFromRow(existing, READ) };
      });
    },
    async abandon(callerKey, key) {
      await db.query('DELETE FROM idempotency WHERE caller_key = $1 AND key = $2 AND response IS NULL', [callerKey, key]);
    },
    async abandonInFlight(before) {
      const rows = await db.query('DELETE FROM idempotency WHERE created_at < $1 AND response IS NULL RETURNING key', [before]);
      return rows.length;
    },
    async deleteExpired(before) {
      const rows = await db.query('DELETE FROM idempotency WHERE created_at < $1 RETURNING key', [before]);
      return rows.length;
    },
  };
}
