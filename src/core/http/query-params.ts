/**
 * Reading the query strings of the scan lists (GET /scans, /vehicles, /scans/export, and the
 * chain's lists under /sync): a blank parameter is one not sent, and the date filters are read
 * strictly (docs/API.md). Shared by routes/scans.ts, routes/sync-hub.ts, routes/sync-desk.ts and
 * the collect CLI.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { ScanQuery } from '../services/ports.js';

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD`, or that with `THH:MM[:SS[.fraction]]` and an optional `Z` / `±HH[:]MM` / `±HH` offset. */
const DATE_PARAM = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * A `from`/`to` filter: `YYYY-MM-DD` (a real calendar date; the whole UTC day, so `from` is its
 * first and `to` its last millisecond) or an ISO 8601 date-time. A date-time without an offset
 * is UTC, never the server's own zone (a shop PC's zone is no business of the POS asking).
 * Anything else (impossible dates, `1`, `Nov 30 2026`: what Date.parse would guess at) is 400.
 */
export function parseDateParam(name: string, raw: string | undefined, endOfDay: boolean): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const invalid = (hint = '') =>
    new AppError(
      'VALIDATION_ERROR',
      `query parameter ${name} must be a date YYYY-MM-DD (a whole UTC day) or an ISO 8601 date-time such as ` +
        `2026-11-24T08:00:00Z or 2026-11-24T09:00+01:00 (without an offset the time is UTC)${hint}`,
    );
  const match = DATE_PARAM.exec(raw);
  if (!match) {
    // An unencoded `+` in a query string arrives as a space.
    throw invalid(/\d \d{2}(?::?\d{2})?$/.test(raw) ? '; send a + in the offset as %2B' : '');
  }
  const [, y, mo, d, h, mi, s, fraction, , sign, offH, offM] = match; // group 8 (`Z`) means UTC, as no offset does
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  const [hour, minute, second] = [Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0)];
  const offsetMinutes = sign === undefined ? 0 : Number(offH) * 60 + Number(offM ?? 0);
  const dayStart = Date.UTC(year, month - 1, day);
  const real = new Date(dayStart);
  if (
    real.getUTCFullYear() !== year ||
    real.getUTCMonth() !== month - 1 ||
    real.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    Number(offM ?? 0) > 59 ||
    Number(offH ?? 0) > 23
  ) {
    throw invalid();
  }
  if (h === undefined) return new Date(endOfDay ? dayStart + DAY_MS - 1 : dayStart);
  const ms = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));
  const local = dayStart + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
  return new Date(local - (sign === '-' ? -1 : 1) * offsetMinutes * 60_000);
}

/**
 * Before validation: a parameter sent empty (`wear=&limit=`, as a POS builds the query from
 * optional form fields for "show all") is one not sent, and `wear` (and the export's `format`)
 * is read in any case, as `position` is on analyze.
 */
export async function blankIsAbsent(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) if (value === '') delete query[name];
  if (typeof query.wear === 'string') query.wear = query.wear.toLowerCase();
  if (typeof query.format === 'string') query.format = query.format.toLowerCase();
  if (typeof query.hasVehicle === 'string') query.hasVehicle = query.hasVehicle.toLowerCase();
}

/** The list filters of a query (vehicle, wear, one day or a range) as the scan service takes them. */
export function toFilter(query: {
  vehicle?: string;
  vehicleKey?: string;
  hasVehicle?: 'true' | 'false';
  wear?: ScanQuery['wear'];
  date?: string;
  from?: string;
  to?: string;
}): ScanQuery {
  const filter: ScanQuery = {};
  if (query.vehicle) filter.vehicle = query.vehicle;
  if (query.vehicleKey) filter.vehicleKey = query.vehicleKey;
  if (query.hasVehicle) filter.hasVehicle = query.hasVehicle === 'true';
  if (query.wear) filter.wear = query.wear;
  if (query.date && (query.from || query.to)) throw new AppError('VALIDATION_ERROR', 'Send either date (one day) or from / to (a range), not both');
  if (query.date && !/^\d{4}-\d{2}-\d{2}$/.test(query.date)) {
    throw new AppError('VALIDATION_ERROR', 'query parameter date must be one whole UTC day, YYYY-MM-DD such as 2026-11-24; for times send from and to');
  }
  const from = parseDateParam(query.date ? 'date' : 'from', query.date || query.from, false);
  const to = parseDateParam(query.date ? 'date' : 'to', query.date || query.to, true);
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}
