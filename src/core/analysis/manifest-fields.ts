/**
 * The checked readers of models/manifest.json's values: each answers the value or throws
 * MODEL_UNAVAILABLE naming the field, so a bad manifest never loads half-read.
 */
import { AppError } from '../errors.js';

/** The largest model file a manifest may name (the shipped four are 0.6–12.3 MB). */
export const MAX_MODEL_BYTES = 256 * 1024 * 1024;

export interface ModelEntry {
  file: string;
  sha256: string;
  bytes: number;
}

export function unavailable(message: string, cause?: unknown): AppError {
  return new AppError('MODEL_UNAVAILABLE', message, cause === undefined ? {} : { cause });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function flag(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw unavailable(`Model manifest: ${where} must be true or false.`);
  return value;
}

export function num(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw unavailable(`Model manifest: ${where} must be a number.`);
  return value;
}

export function list(v: unknown, length: number, where: string): number[] {
  if (!Array.isArray(v) || v.length !== length) throw unavailable(`Model manifest: ${where} must list ${length} numbers.`);
  return v.map((x, i) => num(x, `${where}[${i}]`));
}

/** A number that also passes `ok` (finite numbers that make no sense would load and answer nonsense). */
export function ranged(v: unknown, where: string, ok: (n: number) => boolean, rule: string): number {
  const n = num(v, where);
  if (!ok(n)) throw unavailable(`Model manifest: ${where} must be ${rule} (it is ${n}).`);
  return n;
}

export const positive = (v: unknown, where: string): number => ranged(v, where, (n) => n > 0, 'above 0');
export const share = (v: unknown, where: string): number => ranged(v, where, (n) => n >= 0 && n <= 1, 'from 0 to 1');

/** An object's fields, or none: a missing section then fails on its first required field by name. */
export const fieldsOf = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

export function entry(value: unknown, name: string): ModelEntry {
  if (!isRecord(value) || typeof value.file !== 'string' || typeof value.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(value.sha256)) {
    throw unavailable(`Model manifest: models.${name} needs file and a sha256 hex digest.`);
  }
  if (value.file.includes('/') || value.file.includes('\\')) throw unavailable(`Model manifest: models.${name}.file must be a plain file name.`);
  const bytes = num(value.bytes, `models.${name}.bytes`);
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_MODEL_BYTES) {
    throw unavailable(`Model manifest: models.${name}.bytes must be the file's size, a whole number of bytes from 1 to ${MAX_MODEL_BYTES}.`);
  }
  return { file: value.file, sha256: value.sha256, bytes };
}
