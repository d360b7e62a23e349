/**
 * Every schema migration, in order. Registered here by hand (no directory scan) so the
 * list survives bundling; add a new numbered module and append it, never edit a shipped one.
 */
import { initial } from './001_initial.js';
import { scansByKey } from './002_scans_by_key.js';
import { packRefunds } from './003_pack_refunds.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [initial, scansByKey, packRefunds];
