/** The calibration job as the status shows it, and the last finished one as the store keeps it across restarts. */
import type { CalibrationStatus } from '../../../shared/api.js';
import { isRecord } from '../../analysis/manifest.js';

export type Job = NonNullable<CalibrationStatus['job']>;
export type Finished = Exclude<Job, { state: 'running' }>;
export type Running = Extract<Job, { state: 'running' }>;

/** The meta key the last finished job is kept under (JSON, or `null` once a revert cleared it). */
export const LAST_JOB_KEY = 'calibration.lastJob';

/** A kept job as written by finish(), or null for anything else (an older or damaged record is forgotten). */
export function parseKeptJob(text: string): Finished | null {
  try {
    const value: unknown = JSON.parse(text);
    if (!isRecord(value) || !['applied', 'unchanged', 'failed'].includes(String(value.state))) return null;
    if (typeof value.startedAt !== 'string' || typeof value.finishedAt !== 'string' || typeof value.message !== 'string') return null;
    if (!isRecord(value.skipped) || (value.fit !== null && !isRecord(value.fit))) return null;
    // kept before tread-2026.11.29.4's shop reader: no reader then
    if (isRecord(value.fit) && typeof value.fit.readerApplied !== 'boolean') value.fit.readerApplied = false;
    return value as unknown as Finished;
  } catch {
    return null;
  }
}
