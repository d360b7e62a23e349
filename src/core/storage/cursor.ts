/**
 * What both stores' page cursors and the scan filters' dates must be. A cursor's text is the
 * time in ms and a scan id, nothing else: anything more (a NUL, spaces, a time no timestamp
 * holds) is refused as VALIDATION_ERROR before it reaches a query, on SQLite as on PostgreSQL.
 */
export const CURSOR_TEXT = /^(-?\d{1,16}):([A-Za-z0-9_-]{1,64})$/;

const FIRST_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const LAST_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** Times a cursor or a filter may name: years 1 to 9999 (PostgreSQL's timestamps and JavaScript's dates both hold them). */
export function inDateRange(ms: number): boolean {
  return ms >= FIRST_MS && ms <= LAST_MS;
}
