/**
 * The storage port. Two implementations: SQLite (embedded default, better-sqlite3,
 * WAL) and PostgreSQL (hub mode). Both must pass the same conformance tests
 * (test/storage/conformance.ts), so every method is async and every rule that
 * needs atomicity is stated here and enforced inside the implementation.
 */
import type { Account, AccountWithSecret, ApiKeyRecord, IdempotencyRecord, RedeemedLicense, ScanRecord, Session, TirePosition } from '../types.js';
import type { Wear } from '../analysis/analyzer.js';
import type { MergeInto } from './sync-merge.js';
import type { EditMeta, ScanEdit } from './scan-edit.js';

export interface AccountStore {
  /** Throws AppError CONFLICT when the (case-folded) email exists. */
  create(input: { id: string; email: string; passwordHash: string; createdAt: Date }): Promise<Account>;
  findByEmail(email: string): Promise<AccountWithSecret | null>;
  findById(id: string): Promise<Account | null>;
  /**
   * Registration `first`: creates the account only when none exists yet, decided and done as one
   * step (two at once cannot both be first); null when an account exists. CONFLICT as create.
   */
  createFirst(input: { id: string; email: string; passwordHash: string; createdAt: Date }): Promise<Account | null>;
  /** The id of the account registered first (oldest, then lowest id); null when there is none. */
  firstId(): Promise<string | null>;
}

export interface SessionStore {
  create(session: Session): Promise<void>;
  find(tokenHash: string): Promise<Session | null>;
  delete(tokenHash: string): Promise<void>;
  deleteExpired(now: Date): Promise<number>;
}

export interface ApiKeyStore {
  create(record: ApiKeyRecord): Promise<void>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  listForAccount(accountId: string): Promise<ApiKeyRecord[]>;
  /**
   * The account's keys among `ids`, revoked ones included, in no particular order; unknown ids
   * and other accounts' keys are skipped. One query, so a hub names the shops of a page of scans at once.
   */
  findByIds(accountId: string, ids: readonly string[]): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key belongs to the account (or it was already revoked). */
  revoke(accountId: string, id: string, at: Date): Promise<boolean>;
  touch(id: string, at: Date): Promise<void>;
}

/** A unit of allowance held while one analysis runs. */
export interface Reservation {
  id: string;
  /** What will be charged on commit: the windowed allowance, a pack scan, or nothing (pro). */
  source: 'allowance' | 'pack' | 'unmetered';
  subject: string;
  window: string;
}

export interface ReserveRequest {
  id: string;
  /** `ip:<address>` for anonymous callers, `acct:<id>` for accounts. */
  subject: string;
  /** e.g. `day:2026-11-21` or `month:2026-11` (UTC). */
  window: string;
  /** The windowed allowance (3 anonymous, 10 free). */
  limit: number;
  /** When set, pack credit of this account is used once the allowance is spent. */
  packAccountId: string | null;
  /** Pro: always granted, source `unmetered`, still counted in `used` on commit for statistics. */
  unmetered: boolean;
  now: Date;
}

/** A record of a pack scan charged while free scans were held is kept past any month it could be refunded in. */
export const REFUNDABLE_KEEP_MS = 32 * 86_400_000;

export interface UsageStore {
  /**
   * Atomically: grant `allowance` if used + held < limit for (subject, window);
   * else `pack` if packAccountId's packCredit minus its held pack reservations > 0;
   * else null. N concurrent calls against M units left grant exactly M.
   */
  reserve(request: ReserveRequest): Promise<Reservation | null>;
  /**
   * Give the unit back (the analysis failed). Idempotent. A free (allowance) unit given back goes
   * to the month's oldest pack hold still in flight, else to its oldest pack scan charged while
   * free units were held (its credit returns and it counts as used), else back to the month.
   */
  release(reservationId: string): Promise<void>;
  /**
   * Committed and held units of a window. `held` counts the holds that will add to `used`
   * on commit (allowance and unmetered); pack holds count against pack credit instead.
   */
  usage(subject: string, window: string): Promise<{ used: number; held: number }>;
  /**
   * An account's pack credit and the pack holds on it (every reservation with source `pack`
   * for that account, whoever's request took it), read together so a commit in between
   * cannot be counted twice. Unknown account: both 0. `credit - held` is what is left to reserve.
   */
  packBalance(accountId: string): Promise<{ credit: number; held: number }>;
  /**
   * Drop holds created before `before` (left by a crash); returns how many. A hold dropped
   * here is no longer charged by a late commit, so pick a cutoff far beyond any analysis. Records
   * of pack charges older than REFUNDABLE_KEEP_MS before it go too (their month is over).
   */
  expireReservations(before: Date): Promise<number>;
}

export interface ScanFilter {
  accountId: string;
  /**
   * A part of the vehicle, whatever its spaces, dashes or case: the plate key of this text
   * (src/shared/vehicle.ts) is a substring of the scan's plate key. Text with no letter or digit
   * is matched as a case-insensitive substring of the vehicle as typed.
   */
  vehicle?: string;
  /** Exactly this plate key (already normalised by the caller). */
  vehicleKey?: string;
  /** true: only scans with a plate key; false: only scans without one (no vehicle, or one with no letter or digit). */
  hasVehicle?: boolean;
  wear?: Wear;
  /** createdAt >= from (inclusive). */
  from?: Date;
  /** createdAt <= to (inclusive): pass the end of the day for a date-only bound. */
  to?: Date;
  /** Only scans that came through this API key: on a hub, the scans one shop pushed. */
  apiKeyId?: string;
  /** Only scans with a gauge reading (measurementMm set): what a shop calibration fits on. */
  measured?: boolean;
  /** Opaque cursor from a previous page; a malformed one is AppError VALIDATION_ERROR. */
  cursor?: string;
  limit: number;
}

export interface ScanPage {
  items: ScanRecord[];
  nextCursor: string | null;
}

/** GET /vehicles: the live scans of an account matching a filter, grouped by plate key. */
export interface VehicleFilter extends Omit<ScanFilter, 'cursor' | 'limit' | 'vehicleKey' | 'hasVehicle'> {
  /** Opaque cursor from a previous page; a malformed one is AppError VALIDATION_ERROR. */
  cursor?: string;
  /** Groups per page. */
  limit: number;
  /** Newest scans given with each group. */
  scansPerVehicle: number;
}

export interface VehicleGroupRecord {
  /** null: the scans without a plate key. */
  vehicleKey: string | null;
  scanCount: number;
  lastScanAt: Date;
  firstScanAt: Date;
  /** The group's newest scans (at most scansPerVehicle), newest first. */
  scans: ScanRecord[];
}

export interface VehiclePage {
  /** Newest last scan first (ties: plate key, the no-vehicle group first). */
  items: VehicleGroupRecord[];
  nextCursor: string | null;
}

export interface CommitScanInput {
  scan: ScanRecord;
  /** null for callers that were not metered through a reservation. */
  reservation: Reservation | null;
  /** When the request carried an Idempotency-Key: the response to store with it. */
  idempotency: { callerKey: string; key: string; response: NonNullable<IdempotencyRecord['response']> } | null;
}

export interface ScanStore {
  /**
   * One transaction: charge the reservation (allowance `used` + 1, or pack credit - 1;
   * `unmetered` adds to `used` only), drop the hold, insert the scan, complete the
   * idempotency record. Either all of it happens or none (a duplicate scan id charges nothing).
   * Only a hold that still exists is charged, so pack credit never goes below zero.
   */
  commit(input: CommitScanInput): Promise<void>;
  /**
   * Any stored scan, soft-deleted ones included (with deletedAt set): the service answers
   * NOT_FOUND for those, sync needs them as tombstones.
   */
  get(id: string): Promise<ScanRecord | null>;
  /** Live scans only, newest first (createdAt, then id, descending); the cursor is stable under inserts. */
  list(filter: ScanFilter): Promise<ScanPage>;
  /** Every live scan of an account matching the filter (no paging), oldest first, for CSV export. */
  all(filter: Omit<ScanFilter, 'cursor' | 'limit'>): Promise<ScanRecord[]>;
  /** Soft delete (keeps a tombstone for sync); returns false when absent or already deleted. */
  markDeleted(id: string, at: Date): Promise<boolean>;
  /**
   * Sets (or with null clears) the gauge reading; measuredAt becomes `at` either way so a
   * clear also wins last-writer-wins merges (the scan service shows callers a cleared reading
   * with measuredAt null: presentScan). False when absent or deleted.
   */
  setMeasurement(id: string, measurementMm: number | null, at: Date): Promise<boolean>;
  /**
   * A correction (PATCH /scans/:id, PUT /measurement), as applyEdit (scan-edit.ts) says, read and
   * written in one transaction: recorded in the scan's changes, a new change sequence for sync, the
   * plate key kept beside the vehicle. Returns the record as stored now (unchanged when nothing
   * differs), or null when the scan is absent or deleted.
   */
  edit(id: string, edit: ScanEdit, meta: EditMeta): Promise<ScanRecord | null>;
  /** The account's scans grouped by vehicle (plate key), newest visit first. */
  vehicles(filter: VehicleFilter): Promise<VehiclePage>;
  /**
   * Sync outbox: every commit, measurement and deletion gives the scan a new, strictly
   * increasing change sequence. Returns scans whose latest change is after `afterSeq`,
   * ascending by seq (deleted ones included as tombstones).
   */
  changesSince(afterSeq: number, limit: number): Promise<Array<{ seq: number; scan: ScanRecord }>>;
  /** How many scans changesSince(afterSeq) would give, counted up to `cap` (index only: no rows read). */
  countChangesSince(afterSeq: number, cap: number): Promise<number>;
  /**
   * Hub side of sync: insert a scan pushed by a desktop (no charge), or merge it into
   * the stored copy: immutable fields are kept, the measurement is last-writer-wins by
   * measuredAt (a tie keeps the stored one), a deletion wins over any edit (a tombstone is
   * final; later edits are ignored). Idempotent: a merge that changes nothing takes no new
   * change sequence. Only the copy `into` names is merged into (default: the copy of the same
   * account and API key as `scan`; `'none'`: insert only); any other copy is returned unchanged,
   * inside the same transaction as the check. Returns the stored record.
   */
  upsertSynced(scan: ScanRecord, into?: MergeInto): Promise<ScanRecord>;
  /**
   * The image keys (original and thumbnail) of the live scans among `ids`; unknown ids and
   * tombstones are skipped (a deleted scan's photos are to go: a removal that failed is retried
   * by the sweep). For the leftover sweep, which asks in bounded batches
   * (one indexed lookup per id), so no caller ever needs every scan in memory.
   */
  imageKeysOf(ids: readonly string[]): Promise<string[]>;
}

/** Small key/value state (sync cursors, last errors) that must survive restarts. */
export interface MetaStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
}

export interface LicenseStore {
  /**
   * One transaction: insert the redemption (AppError LICENSE_ALREADY_REDEEMED when the
   * code id exists, NOT_FOUND when the account does not) and credit the account: pack adds
   * `scans` to packCredit, pro sets proExpiresAt to the license's end; a pro license ending at or
   * before the account's current pro is AppError CONFLICT and stores nothing (proAddsNothing).
   */
  redeem(license: RedeemedLicense): Promise<Account>;
  listForAccount(accountId: string): Promise<RedeemedLicense[]>;
}

export interface IdempotencyStore {
  /**
   * Claim (callerKey, key). Records created before `expiredBefore` count as absent
   * and are replaced. Returns the existing record when someone else holds it.
   */
  begin(record: Omit<IdempotencyRecord, 'response'>, expiredBefore: Date): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRecord }>;
  /** Forget an in-flight claim whose request failed, so a retry runs afresh. */
  abandon(callerKey: string, key: string): Promise<void>;
  /**
   * Forget every in-flight claim made before `before` (completed responses stay): a desk's
   * start, whose data-folder lock means nothing else can still be working on them.
   */
  abandonInFlight(before: Date): Promise<number>;
  deleteExpired(before: Date): Promise<number>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  accounts: AccountStore;
  sessions: SessionStore;
  apiKeys: ApiKeyStore;
  usage: UsageStore;
  scans: ScanStore;
  licenses: LicenseStore;
  idempotency: IdempotencyStore;
  meta: MetaStore;
  /** Liveness for GET /health. */
  ping(): Promise<void>;
  /** When this database was created (its first migration); null if it cannot tell. */
  createdAt(): Promise<Date | null>;
  close(): Promise<void>;
}

export type { TirePosition };
