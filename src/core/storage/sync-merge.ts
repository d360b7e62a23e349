/** The hub's merge of a pushed scan into its stored copy: one rule for the SQLite and PostgreSQL stores. */
import type { ScanRecord } from '../types.js';
import { mergeChanges, sameChanges } from './scan-edit.js';

const ms = (date: Date | null): number | null => (date === null ? null : date.getTime());

/**
 * Which stored copy a push may change: the copy of the shop (hub API key id; null for the hub's
 * own scans) whose ownership the caller checked, or `'none'` for a first push, which expects no
 * copy at all. The default is the pushing key's own copy.
 */
export type MergeInto = { apiKeyId: string | null } | 'none';

/**
 * Merge rules: a copy of another account or another shop than `into` names is left as it is (two
 * first pushes of one id at once: the one that lost is checked as a later push would be, never
 * merged unseen); fields fixed at analysis time stay as first stored; the measurement with the
 * later measuredAt wins (ties keep the stored one, so a replay changes nothing); vehicle and
 * position (corrections, PATCH /scans/:id) with the later editedAt win the same way; the
 * histories of corrections are joined; a tombstone is final — once deleted, later edits are
 * ignored, and the deletion time first stored is kept. A deletion that arrives with a newer
 * reading takes both.
 */
export function mergeSynced(stored: ScanRecord, incoming: ScanRecord, into: MergeInto = { apiKeyId: incoming.apiKeyId }): ScanRecord {
  if (into === 'none' || stored.accountId !== incoming.accountId || stored.apiKeyId !== into.apiKeyId) return stored;
  if (stored.deletedAt !== null) return stored;
  const incomingNewer = incoming.measuredAt !== null && (stored.measuredAt === null || incoming.measuredAt > stored.measuredAt);
  const editNewer = incoming.editedAt !== null && (stored.editedAt === null || incoming.editedAt > stored.editedAt);
  return {
    ...stored,
    vehicle: editNewer ? incoming.vehicle : stored.vehicle,
    position: editNewer ? incoming.position : stored.position,
    editedAt: editNewer ? incoming.editedAt : stored.editedAt,
    changes: mergeChanges(stored.changes, incoming.changes),
    measurementMm: incomingNewer ? incoming.measurementMm : stored.measurementMm,
    measuredAt: incomingNewer ? incoming.measuredAt : stored.measuredAt,
    deletedAt: incoming.deletedAt,
  };
}

/** Whether a merge changed nothing (no new change to record). */
export function sameMutableFields(a: ScanRecord, b: ScanRecord): boolean {
  return (
    a.measurementMm === b.measurementMm &&
    ms(a.measuredAt) === ms(b.measuredAt) &&
    ms(a.deletedAt) === ms(b.deletedAt) &&
    a.vehicle === b.vehicle &&
    a.position === b.position &&
    ms(a.editedAt) === ms(b.editedAt) &&
    sameChanges(a.changes, b.changes)
  );
}
