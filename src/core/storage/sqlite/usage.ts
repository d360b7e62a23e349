/**
 * Metering. A reservation is a row in `reservations` (a hold); committing a scan turns the
 * hold into a charge (see scans.ts). Every decision runs under BEGIN IMMEDIATE, so N callers
 * racing for M units — in one process or several on the same file — get exactly M.
 */
import { REFUNDABLE_KEEP_MS, type Reservation, type UsageStore } from '../store.js';
import { type Db, immediate, run, toMs } from './db.js';

interface ReservationRow {
  id: string;
  source: Reservation['source'];
  subject: string;
  window: string;
  pack_account_id: string | null;
  free_held: number;
  created_at: number;
}

/**
 * `held` counts the holds that will add to `used` when committed (allowance and unmetered);
 * pack holds draw on pack credit instead and are counted against it.
 */
const HELD_SQL = `SELECT COUNT(*) AS n FROM reservations
  WHERE subject = ? AND window = ? AND source IN ('allowance', 'unmetered')`;

/**
 * A free scan given back (its request failed) goes to the oldest pack hold of the same month still
 * in flight: that request then counts as one of the month's free scans and the pack stays whole,
 * so packs are spent only after the free ones (docs/API.md §4).
 */
const PROMOTE_SQL = `UPDATE reservations SET source = 'allowance', pack_account_id = NULL, free_held = 0
  WHERE id = (SELECT id FROM reservations WHERE subject = ? AND window = ? AND source = 'pack' ORDER BY created_at, id LIMIT 1)`;

/**
 * With no pack hold in flight, it goes to the oldest pack scan of the month already charged while
 * free scans were held (pack_refundable): its credit comes back and it counts as a free scan.
 */
const REFUNDABLE_SQL = `SELECT reservation_id, account_id FROM pack_refundable
  WHERE subject = ? AND window = ? ORDER BY held_at, reservation_id LIMIT 1`;

const COUNT_USED_SQL = `INSERT INTO usage_counters (subject, window, used) VALUES (?, ?, 1)
  ON CONFLICT (subject, window) DO UPDATE SET used = used + 1`;

export function createUsageStore(db: Db): UsageStore {
  const used = db.prepare('SELECT used FROM usage_counters WHERE subject = ? AND window = ?');
  const held = db.prepare(HELD_SQL);
  const packCredit = db.prepare('SELECT pack_credit FROM accounts WHERE id = ?');
  const packHeld = db.prepare("SELECT COUNT(*) AS n FROM reservations WHERE pack_account_id = ? AND source = 'pack'");
  const insert = db.prepare('INSERT INTO reservations (id, source, subject, window, pack_account_id, created_at, free_held) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const packBalance = db.prepare(
    `SELECT (SELECT pack_credit FROM accounts WHERE id = ?) AS credit,
            (SELECT COUNT(*) FROM reservations WHERE pack_account_id = ? AND source = 'pack') AS held`,
  );
  const release = db.prepare('DELETE FROM reservations WHERE id = ? RETURNING source, subject, window');
  const promote = db.prepare(PROMOTE_SQL);
  const refundable = db.prepare(REFUNDABLE_SQL);
  const dropRefundable = db.prepare('DELETE FROM pack_refundable WHERE reservation_id = ?');
  const refundPack = db.prepare('UPDATE accounts SET pack_credit = pack_credit + 1 WHERE id = ?');
  const countUsed = db.prepare(COUNT_USED_SQL);
  const expire = db.prepare('DELETE FROM reservations WHERE created_at < ?');
  const expireRefundable = db.prepare('DELETE FROM pack_refundable WHERE held_at < ?');

  const usedOf = (subject: string, window: string): number => (used.get(subject, window) as { used: number } | undefined)?.used ?? 0;
  const heldOf = (subject: string, window: string): number => (held.get(subject, window) as { n: number }).n;

  return {
    reserve: (request) =>
      immediate(db, () => {
        const grant = (source: Reservation['source'], packAccountId: string | null, freeHeld = false): Reservation => {
          insert.run(request.id, source, request.subject, request.window, packAccountId, toMs(request.now), freeHeld ? 1 : 0);
          return { id: request.id, source, subject: request.subject, window: request.window };
        };
        if (request.unmetered) return grant('unmetered', null);
        const heldFree = heldOf(request.subject, request.window);
        if (usedOf(request.subject, request.window) + heldFree < request.limit) {
          return grant('allowance', null);
        }
        if (request.packAccountId !== null) {
          const credit = (packCredit.get(request.packAccountId) as { pack_credit: number } | undefined)?.pack_credit ?? 0;
          const heldPack = (packHeld.get(request.packAccountId) as { n: number }).n;
          if (credit - heldPack > 0) return grant('pack', request.packAccountId, heldFree > 0);
        }
        return null;
      }),
    release: (reservationId) =>
      immediate(db, () => {
        const row = release.get(reservationId) as Pick<ReservationRow, 'source' | 'subject' | 'window'> | undefined;
        if (row?.source !== 'allowance') return;
        if (promote.run(row.subject, row.window).changes > 0) return;
        const charged = refundable.get(row.subject, row.window) as { reservation_id: string; account_id: string } | undefined;
        if (!charged) return;
        dropRefundable.run(charged.reservation_id);
        refundPack.run(charged.account_id);
        countUsed.run(row.subject, row.window);
      }),
    usage: (subject, window) => run(() => db.transaction(() => ({ used: usedOf(subject, window), held: heldOf(subject, window) }))()),
    packBalance: (accountId) =>
      run(() => {
        const row = packBalance.get(accountId, accountId) as { credit: number | null; held: number };
        return { credit: row.credit ?? 0, held: row.held };
      }),
    expireReservations: (before) =>
      run(() => {
        // records of pack charges outlive their month's last possible refund: gone with it
        expireRefundable.run(toMs(before) - REFUNDABLE_KEEP_MS);
        return expire.run(toMs(before)).changes;
      }),
  };
}

/**
 * Turns a hold into a charge inside the caller's transaction. Only a hold that still exists is
 * charged: a reservation committed twice, or one already expired, is never charged again, and
 * pack credit cannot go below zero.
 */
export function createCharger(db: Db): (reservationId: string) => void {
  const find = db.prepare('SELECT * FROM reservations WHERE id = ?');
  const drop = db.prepare('DELETE FROM reservations WHERE id = ?');
  const spendPack = db.prepare('UPDATE accounts SET pack_credit = pack_credit - 1 WHERE id = ? AND pack_credit > 0');
  const countUsed = db.prepare(COUNT_USED_SQL);
  const recordRefundable = db.prepare('INSERT OR IGNORE INTO pack_refundable (reservation_id, subject, window, account_id, held_at) VALUES (?, ?, ?, ?, ?)');
  return (reservationId) => {
    const row = find.get(reservationId) as ReservationRow | undefined;
    if (!row) return;
    drop.run(reservationId);
    if (row.source !== 'pack') {
      countUsed.run(row.subject, row.window);
      return;
    }
    // charged while free scans were held: one of them, given back, comes to this scan (release)
    if (spendPack.run(row.pack_account_id).changes > 0 && row.free_held === 1) {
      recordRefundable.run(row.id, row.subject, row.window, row.pack_account_id, row.created_at);
    }
  };
}
