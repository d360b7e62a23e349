/**
 * Allowances (docs/API.md §4): anonymous 3 per client IP per UTC day; free accounts 10 per UTC
 * calendar month (session and API keys together); pack credit after the month's free 10,
 * never expiring; pro unmetered while unexpired. The store's reserve is the atomic part;
 * this file decides who is metered how and renders the X-RateLimit-* headers.
 *
 * Anonymous callers are counted by meteringAddress (an IPv6 caller by its /64).
 *
 * Header conventions (documented for integrators):
 * - X-RateLimit-Reset: Unix epoch seconds when the current window ends
 *   (next UTC midnight for anonymous, the 1st of next month 00:00 UTC for accounts).
 * - Free account: Limit 10, Remaining = allowance left this month + unspent pack credit.
 * - Pro: Limit and Remaining are the literal token `unlimited` (never a number that could
 *   be mistaken for a cap).
 * - 429: Retry-After = seconds until the window resets, for anonymous and free callers alike
 *   (waiting for the 1st does help a free account).
 */
import { AppError } from '../errors.js';
import type { Reservation, Store } from '../storage/store.js';
import type { Account, Caller } from '../types.js';
import type { RateLimitState } from './ports.js';
import { meteringAddress } from './support/client-ip.js';
import { randomId } from './support/ids.js';

export const ANONYMOUS_DAILY_LIMIT = 3;
export const FREE_MONTHLY_LIMIT = 10;

export interface Window {
  name: string;
  endsAt: Date;
}

export function dayWindow(now: Date): Window {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { name: `day:${new Date(start).toISOString().slice(0, 10)}`, endsAt: new Date(start + 86_400_000) };
}

export function monthWindow(now: Date): Window {
  const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name: `month:${month}`, endsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

export function isPro(account: Account, now: Date): boolean {
  return account.proExpiresAt !== null && account.proExpiresAt.getTime() > now.getTime();
}

/** How a caller is metered right now. */
export interface Meter {
  subject: string;
  window: Window;
  /** null: unmetered (pro). */
  limit: number | null;
  packAccountId: string | null;
  exceededMessage: string;
}

export function meterFor(caller: Caller, now: Date): Meter {
  if (caller.kind === 'anonymous') {
    return {
      subject: `ip:${meteringAddress(caller.ip)}`,
      window: dayWindow(now),
      limit: ANONYMOUS_DAILY_LIMIT,
      packAccountId: null,
      exceededMessage: `Daily scan limit of ${ANONYMOUS_DAILY_LIMIT} reached for anonymous use; sign in for more, or try again after midnight UTC.`,
    };
  }
  const pro = isPro(caller.account, now);
  return {
    subject: `acct:${caller.account.id}`,
    window: monthWindow(now),
    limit: pro ? null : FREE_MONTHLY_LIMIT,
    packAccountId: pro ? null : caller.account.id,
    exceededMessage: `Monthly scan limit of ${FREE_MONTHLY_LIMIT} reached for the free plan; redeem a scan pack or wait for the 1st of next month (UTC).`,
  };
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'X-RateLimit-Limit': state.limit === null ? 'unlimited' : String(state.limit),
    'X-RateLimit-Remaining': state.remaining === null ? 'unlimited' : String(state.remaining),
    'X-RateLimit-Reset': String(Math.ceil(state.resetAt.getTime() / 1000)),
  };
}

function retryAfterSeconds(until: Date, now: Date): string {
  return String(Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)));
}

export class Metering {
  constructor(private readonly store: Store) {}

  /**
   * Current state: what a new reservation could still get. Every hold counts as spent, of the
   * allowance and of pack credit alike, whoever holds it (another request of the account still
   * analysing included), so the analyze path reports the state after its own charge before
   * the commit happens (the commit stores the response for idempotent replays).
   */
  async state(caller: Caller, now: Date): Promise<RateLimitState> {
    const meter = meterFor(caller, now);
    if (meter.limit === null) return { limit: null, remaining: null, resetAt: meter.window.endsAt };
    const [{ used, held }, pack] = await Promise.all([
      this.store.usage.usage(meter.subject, meter.window.name),
      meter.packAccountId ? this.store.usage.packBalance(meter.packAccountId) : null,
    ]);
    // Pack credit left counts in both figures, so Remaining never exceeds Limit and Limit − Remaining
    // is what the window's free allowance has used (a POS computing "used" gets no negative number).
    const packLeft = pack ? Math.max(0, pack.credit - pack.held) : 0;
    const remaining = Math.max(0, meter.limit - used - held) + packLeft;
    return { limit: meter.limit + packLeft, remaining, resetAt: meter.window.endsAt };
  }

  /** Hold one unit for an analysis; AppError RATE_LIMIT_EXCEEDED (with headers) when none is left. */
  async reserve(caller: Caller, now: Date): Promise<Reservation> {
    const meter = meterFor(caller, now);
    const reservation = await this.store.usage.reserve({
      id: randomId(),
      subject: meter.subject,
      window: meter.window.name,
      limit: meter.limit ?? 0,
      packAccountId: meter.packAccountId,
      unmetered: meter.limit === null,
      now,
    });
    if (reservation) return reservation;
    throw exceeded(meter, now);
  }

  /**
   * The refusal reserve() would give, decided before an upload is read: only when nothing could be
   * reserved even if every analysis in flight failed and gave its hold back (the month's free scans
   * used by committed scans alone, no committed pack credit). Otherwise null: reserve() decides.
   */
  async spentRefusal(caller: Caller, now: Date): Promise<AppError | null> {
    const meter = meterFor(caller, now);
    if (meter.limit === null) return null;
    const [{ used }, pack] = await Promise.all([
      this.store.usage.usage(meter.subject, meter.window.name),
      meter.packAccountId ? this.store.usage.packBalance(meter.packAccountId) : null,
    ]);
    if (used < meter.limit || (pack !== null && pack.credit > 0)) return null;
    return exceeded(meter, now);
  }
}

function exceeded(meter: Meter, now: Date): AppError {
  const headers = {
    ...rateLimitHeaders({ limit: meter.limit, remaining: 0, resetAt: meter.window.endsAt }),
    'Retry-After': retryAfterSeconds(meter.window.endsAt, now),
  };
  return new AppError('RATE_LIMIT_EXCEEDED', meter.exceededMessage, { headers });
}
