/**
 * The vehicle list's page, as both stores build it from two queries: the groups (one more than
 * the page holds, to know whether another page follows) and each page group's newest scans.
 */
import type { ScanRecord } from '../types.js';
import { encodeVehicleCursor } from './cursor.js';
import type { VehiclePage } from './store.js';

/** One group as the store's query gives it: the plate key ('' for none) and its scans' count and times. */
export interface VehicleGroupRow {
  key: string;
  count: number;
  lastAt: Date;
  firstAt: Date;
}

export function vehiclePageOf<Row extends { vehicle_key: string | null }>(
  groups: VehicleGroupRow[],
  limit: number,
  rows: Row[],
  toScan: (row: Row) => ScanRecord,
): VehiclePage {
  const page = groups.slice(0, limit);
  const byKey = new Map<string, Row[]>();
  for (const row of rows) {
    const k = row.vehicle_key ?? '';
    const group = byKey.get(k);
    if (group) group.push(row);
    else byKey.set(k, [row]);
  }
  const last = page[page.length - 1];
  return {
    items: page.map((g) => ({
      vehicleKey: g.key === '' ? null : g.key,
      scanCount: g.count,
      lastScanAt: g.lastAt,
      firstScanAt: g.firstAt,
      scans: (byKey.get(g.key) ?? []).map(toScan),
    })),
    nextCursor: groups.length > limit && last ? encodeVehicleCursor({ lastMs: last.lastAt.getTime(), key: last.key }) : null,
  };
}
