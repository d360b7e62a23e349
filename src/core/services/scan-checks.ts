/** The checks of what callers send the scan service: gauge readings, corrections, list filters and page sizes. */
import { WEAR_CLASSES } from '../analysis/analyzer.js';
import { DEFAULT_PAGE, MAX_MEASUREMENT_MM, MAX_PAGE } from '../../shared/contract/limits.js';
import { vehicleKey } from '../../shared/vehicle.js';
import { AppError } from '../errors.js';
import { inDateRange } from '../storage/cursor.js';
import type { ScanEdit } from '../storage/scan-edit.js';
import type { ScanFilter } from '../storage/store.js';
import { checkPosition, checkVehicle } from './analyze.js';
import type { ScanQuery } from './ports.js';

/** The fields PATCH /scans/:id corrects. */
export const PATCH_FIELDS = ['vehicle', 'position', 'measurementMm'] as const;
/** What PUT /scans/:id/measurement accepts, for every message that refuses a reading. */
export const MEASUREMENT_RULE = `measurementMm must be a JSON number of mm from 0 to ${MAX_MEASUREMENT_MM} with at most 2 decimals, or null to clear the reading.`;

/** A gauge reading as sent: only a real number in range (no strings, booleans or arrays), or null. */
export function checkMeasurement(mm: unknown): number | null {
  if (mm === null) return null;
  const ok = typeof mm === 'number' && Number.isFinite(mm) && mm >= 0 && mm <= MAX_MEASUREMENT_MM && Math.abs(mm * 100 - Math.round(mm * 100)) < 1e-6;
  if (!ok) throw new AppError('VALIDATION_ERROR', MEASUREMENT_RULE);
  return Math.round(mm * 100) / 100;
}

/**
 * A correction as sent (PATCH /scans/:id), checked field by field as on creation: vehicle as the
 * analyze form's (trimmed, at most 64 printable characters; empty or null clears), position one of
 * FL FR RL RR SPARE in any case (empty or null clears), measurementMm as PUT /measurement. Nothing
 * is coerced: a number for the vehicle or a string for the reading is refused.
 */
export function checkPatch(patch: unknown): ScanEdit {
  const rule = `send a JSON object with at least one of ${PATCH_FIELDS.join(', ')}`;
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new AppError('VALIDATION_ERROR', `The body must be a JSON object: ${rule}.`);
  }
  const body = patch as Record<string, unknown>;
  const unknown = Object.keys(body).find((name) => !(PATCH_FIELDS as readonly string[]).includes(name));
  if (unknown !== undefined) {
    throw new AppError('VALIDATION_ERROR', `Field ${unknown.slice(0, 40)} cannot be changed; ${rule}.`);
  }
  const edit: ScanEdit = {};
  if ('vehicle' in body) {
    if (body.vehicle !== null && typeof body.vehicle !== 'string') {
      throw new AppError('VALIDATION_ERROR', "vehicle must be text (the plate or the customer's name for the car), or null to clear it.");
    }
    edit.vehicle = checkVehicle(body.vehicle);
  }
  if ('position' in body) {
    if (body.position !== null && typeof body.position !== 'string') {
      throw new AppError('VALIDATION_ERROR', 'position must be one of FL, FR, RL, RR, SPARE, or null to clear it.');
    }
    edit.position = checkPosition(body.position === null ? null : body.position.trim().toUpperCase());
  }
  if ('measurementMm' in body) edit.measurementMm = checkMeasurement(body.measurementMm);
  if (Object.keys(edit).length === 0) throw new AppError('VALIDATION_ERROR', `Nothing to change: ${rule}.`);
  return edit;
}

export function checkFilter(query: Omit<ScanQuery, 'cursor' | 'limit'>): Omit<ScanFilter, 'accountId' | 'cursor' | 'limit'> {
  if (query.wear !== undefined && !(WEAR_CLASSES as readonly string[]).includes(query.wear)) {
    throw new AppError('VALIDATION_ERROR', `wear must be one of ${WEAR_CLASSES.join(', ')}.`);
  }
  for (const [name, value] of [
    ['from', query.from],
    ['to', query.to],
  ] as const) {
    if (value !== undefined && (!(value instanceof Date) || !inDateRange(value.getTime()))) {
      throw new AppError('VALIDATION_ERROR', `${name} must be a valid date from year 1 to 9999.`);
    }
  }
  for (const [name, value] of [
    ['vehicle', query.vehicle],
    ['vehicleKey', query.vehicleKey],
  ] as const) {
    if (value !== undefined && typeof value !== 'string') throw new AppError('VALIDATION_ERROR', `${name} must be text.`);
    if (value !== undefined && /\p{Cc}/u.test(value)) throw new AppError('VALIDATION_ERROR', `${name} must not contain control characters.`);
  }
  if (query.vehicleKey !== undefined && query.vehicle !== undefined) {
    throw new AppError('VALIDATION_ERROR', 'Send either vehicle (a search) or vehicleKey (one vehicle), not both.');
  }
  const filter: Omit<ScanFilter, 'accountId' | 'cursor' | 'limit'> = {};
  if (query.vehicle !== undefined && query.vehicle.trim()) filter.vehicle = query.vehicle.trim();
  if (query.vehicleKey !== undefined) {
    const key = vehicleKey(query.vehicleKey);
    if (key === null) throw new AppError('VALIDATION_ERROR', 'vehicleKey must hold a letter or a digit (for scans without a vehicle send hasVehicle=false).');
    filter.vehicleKey = key;
  }
  if (query.hasVehicle !== undefined) filter.hasVehicle = query.hasVehicle;
  if (query.wear !== undefined) filter.wear = query.wear;
  if (query.from !== undefined) filter.from = query.from;
  if (query.to !== undefined) filter.to = query.to;
  return filter;
}

export function checkLimit(limit: number | undefined, name = 'limit', fallback = DEFAULT_PAGE, max = MAX_PAGE): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new AppError('VALIDATION_ERROR', `${name} must be an integer from 1 to ${max}.`);
  }
  return limit;
}
