/**
 * Every schema migration, in order. Registered here by hand (no directory scan) so the
 * list survives bundling; add a new numbered module and append it, never edit a shipped one.
 */
import { initial } from './001_initial.js';
import { scansByKey } from './002_scans_by_key.js';
import type Database from 'better-sqlite3';
import { packRefunds } from './003_pack_refunds.js';
import { vehicleKeyAndCorrections } from './004_vehicle_key_and_corrections.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** A step SQL alone cannot do (a backfill computed in JS), run after `sql` in the same transaction. */
  run?(db: Database.Database): void;
}

export const MIGRATIONS: readonly Migration[] = [initial, scansByKey, packRefunds, vehicleKeyAndCorrections];
