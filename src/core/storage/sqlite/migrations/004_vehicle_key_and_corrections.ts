import type Database from 'better-sqlite3';
import { vehicleKey } from '../../../../shared/vehicle.js';
import type { Migration } from './index.js';

/**
 * Issue 42. `vehicle_key`: the plate key (src/shared/vehicle.ts) beside the plate as typed, so a
 * search or the vehicle view finds "KA-TW-204" from "ka tw 204"; existing rows are filled in by
 * `run` (the key is Unicode-aware, which SQLite's own functions are not). `edited_at` and
 * `changes`: corrections of vehicle, position and gauge reading, and their history (JSON).
 */
export const vehicleKeyAndCorrections: Migration = {
  version: 4,
  name: 'vehicle key and corrections',
  sql: `ALTER TABLE scans ADD COLUMN vehicle_key TEXT;
ALTER TABLE scans ADD COLUMN edited_at INTEGER;
ALTER TABLE scans ADD COLUMN changes TEXT NOT NULL DEFAULT '[]';
CREATE INDEX scans_account_vehicle_key ON scans(account_id, vehicle_key, created_at, id);`,
  run(db: Database.Database) {
    const rows = db.prepare('SELECT DISTINCT vehicle FROM scans WHERE vehicle IS NOT NULL').all() as Array<{ vehicle: string }>;
    const update = db.prepare('UPDATE scans SET vehicle_key = ? WHERE vehicle = ?');
    for (const { vehicle } of rows) update.run(vehicleKey(vehicle), vehicle);
  },
};
