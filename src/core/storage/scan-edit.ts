/**
 * Corrections of a stored scan (vehicle, position, gauge reading), one rule for the SQLite and
 * PostgreSQL stores: what changes, what is recorded in the scan's history, and how two histories
 * of one scan (a desk's and its hub's) are merged.
 */
import { SCAN_CHANGES_KEPT, SCAN_CHANGE_FIELDS, SCAN_CHANGE_VIAS, type ScanChange, type ScanChangeVia, type ScanRecord, type TirePosition } from '../types.js';

/** What a correction may set; a field left out is left as it is. Values are already checked by the scan service. */
export interface ScanEdit {
  vehicle?: string | null;
  position?: TirePosition | null;
  measurementMm?: number | null;
}

export interface EditMeta {
  at: Date;
  via: ScanChangeVia;
}

/**
 * The record after `edit`, or null when it would write nothing. A changed vehicle or position sets
 * editedAt; a measurement sent sets measuredAt even when the value is the same one (a reading taken
 * again, as PUT /measurement always did; a clear too, so it wins the hub's merge). Only values
 * that differ are recorded in `changes`.
 */
export function applyEdit(stored: ScanRecord, edit: ScanEdit, meta: EditMeta): ScanRecord | null {
  const next: ScanRecord = { ...stored, changes: [...stored.changes] };
  const added: ScanChange[] = [];
  let write = false;
  const record = (field: ScanChange['field'], from: string | number | null, to: string | number | null) =>
    added.push({ at: meta.at, field, from, to, via: meta.via });
  if (edit.vehicle !== undefined && edit.vehicle !== stored.vehicle) {
    record('vehicle', stored.vehicle, edit.vehicle);
    next.vehicle = edit.vehicle;
    next.editedAt = meta.at;
    write = true;
  }
  if (edit.position !== undefined && edit.position !== stored.position) {
    record('position', stored.position, edit.position);
    next.position = edit.position;
    next.editedAt = meta.at;
    write = true;
  }
  if (edit.measurementMm !== undefined) {
    if (edit.measurementMm !== stored.measurementMm) record('measurementMm', stored.measurementMm, edit.measurementMm);
    next.measurementMm = edit.measurementMm;
    next.measuredAt = meta.at;
    write = true;
  }
  if (!write) return null;
  next.changes = keepNewest([...stored.changes, ...added]);
  return next;
}

function keepNewest(changes: ScanChange[]): ScanChange[] {
  return changes.length > SCAN_CHANGES_KEPT ? changes.slice(changes.length - SCAN_CHANGES_KEPT) : changes;
}

const changeId = (c: ScanChange) => `${c.at.getTime()}|${c.field}|${JSON.stringify(c.from)}|${JSON.stringify(c.to)}`;

/**
 * Both histories of one scan as one: every change once (the same time, field and values), oldest
 * first (changes made at one time keep the order they were recorded in: `a`'s, then what only `b`
 * has), the newest SCAN_CHANGES_KEPT kept. A merge repeated changes nothing.
 */
export function mergeChanges(a: readonly ScanChange[], b: readonly ScanChange[]): ScanChange[] {
  const byId = new Map<string, ScanChange>();
  for (const change of [...a, ...b]) if (!byId.has(changeId(change))) byId.set(changeId(change), change);
  // Array.prototype.sort is stable: equal times keep their recorded order
  const all = [...byId.values()].sort((x, y) => x.at.getTime() - y.at.getTime());
  return keepNewest(all);
}

export function sameChanges(a: readonly ScanChange[], b: readonly ScanChange[]): boolean {
  return a.length === b.length && a.every((change, i) => changeId(change) === changeId(b[i]!));
}

/** As stored (JSON text on SQLite, jsonb on PostgreSQL) and as synced: dates as ISO strings. */
export interface StoredChange {
  at: string;
  field: string;
  from: string | number | null;
  to: string | number | null;
  via: string;
}

export function changesToJson(changes: readonly ScanChange[]): StoredChange[] {
  return changes.map((c) => ({ at: c.at.toISOString(), field: c.field, from: c.from, to: c.to, via: c.via }));
}

const value = (v: unknown): string | number | null => (typeof v === 'string' ? v.slice(0, 64) : typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Stored or pushed history read back; an entry that is not a change (a newer version's, a broken one) is skipped. */
export function changesFromJson(raw: unknown): ScanChange[] {
  if (!Array.isArray(raw)) return [];
  const out: ScanChange[] = [];
  for (const entry of raw as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const at = typeof e.at === 'string' ? new Date(e.at) : null;
    if (!at || Number.isNaN(at.getTime())) continue;
    if (!(SCAN_CHANGE_FIELDS as readonly unknown[]).includes(e.field)) continue;
    const via = (SCAN_CHANGE_VIAS as readonly unknown[]).includes(e.via) ? (e.via as ScanChangeVia) : 'sync';
    out.push({ at, field: e.field as ScanChange['field'], from: value(e.from), to: value(e.to), via });
  }
  return keepNewest(out);
}
