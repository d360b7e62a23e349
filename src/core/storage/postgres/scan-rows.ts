/**
 * The PostgreSQL side of the `scans` row mapping (scan-columns.ts), and the change sequence. Every
 * change takes the next value of scan_change_seq under a transaction-scoped advisory lock held to
 * COMMIT, so sequence numbers become visible in order and a reader of changesSince never skips a
 * change that commits late.
 */
import type { ScanRecord } from '../../types.js';
import { type ScanRowOf, insertValues, scanFromRow, scanSql, updateValues } from '../scan-columns.js';
import { num, READ, type Queryable } from './db.js';

const CHANGE_LOCK = 7_146_908_218;

/** Times come as Date, jsonb parsed by the driver; the change sequence (bigint) as text. */
export interface ScanRow extends ScanRowOf<Date, unknown> {
  change_seq: string;
}

const SQL = scanSql((n) => `$${n}`);
const asIs = (at: Date | null) => at;

export function toScan(row: ScanRow): ScanRecord {
  return scanFromRow(row, READ);
}

export async function nextSeq(tx: Queryable): Promise<number> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [CHANGE_LOCK]);
  const [row] = await tx.query<{ seq: string }>(`SELECT nextval('scan_change_seq') AS seq`);
  return num(row!.seq);
}

/** Locks a live scan's row; false when there is none. */
export async function lockLiveRow(tx: Queryable, id: string): Promise<boolean> {
  const rows = await tx.query('SELECT id FROM scans WHERE id = $1 AND deleted_at IS NULL FOR UPDATE', [id]);
  return rows.length === 1;
}

export async function insertScan(tx: Queryable, scan: ScanRecord, onConflictNothing: boolean): Promise<boolean> {
  const values = insertValues(scan, await nextSeq(tx), asIs);
  const rows = await tx.query(`${SQL.insert} ${onConflictNothing ? 'ON CONFLICT (id) DO NOTHING ' : ''}RETURNING id`, values);
  return rows.length === 1;
}

/** Writes every field a correction or a sync merge may change, under a new change sequence (the row is locked). */
export async function updateMutable(tx: Queryable, scan: ScanRecord): Promise<void> {
  await tx.query(SQL.update, updateValues(scan, await nextSeq(tx), asIs));
}
