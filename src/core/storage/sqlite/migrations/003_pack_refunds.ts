import type { Migration } from './index.js';

/**
 * A pack scan charged while one of the month's free scans was only held (its request still
 * running) is recorded, so that free scan, given back because its request failed, can go to it:
 * the pack credit comes back and the scan counts as free (docs/API.md §4: packs only after the free
 * scans). `free_held` marks a pack hold granted while free scans were held.
 */
export const packRefunds: Migration = {
  version: 3,
  name: 'pack refunds',
  sql: `ALTER TABLE reservations ADD COLUMN free_held INTEGER NOT NULL DEFAULT 0;
CREATE TABLE pack_refundable (
  reservation_id TEXT PRIMARY KEY,
  subject TEXT NOT NULL,
  window TEXT NOT NULL,
  account_id TEXT NOT NULL,
  held_at INTEGER NOT NULL
);
CREATE INDEX pack_refundable_window ON pack_refundable(subject, window, held_at);`,
};
