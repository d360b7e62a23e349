/**
 * CSV export of a shop's scans with their gauge readings: RFC 4180 (CRLF, quotes
 * doubled) and safe to open in a spreadsheet: a cell that starts with = + - @ tab or CR
 * gets a leading apostrophe so it is shown as text, never run as a formula.
 */
import type { ScanRecord } from '../types.js';

export const CSV_HEADER = [
  'scanId',
  'createdAt',
  'vehicle',
  'position',
  'wear',
  'estimatedDepthMm',
  'depthMinMm',
  'depthMaxMm',
  'confidence',
  'modelVersion',
  'measurementMm',
  'measuredAt',
] as const;

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function scansToCsv(scans: readonly ScanRecord[]): string {
  const rows = scans.map((s) =>
    [
      s.id,
      s.createdAt.toISOString(),
      s.vehicle,
      s.position,
      s.result.wear,
      s.result.estimatedDepthMm,
      s.result.depthRangeMm.min,
      s.result.depthRangeMm.max,
      s.result.confidence,
      s.result.modelVersion,
      s.measurementMm,
      s.measuredAt ? s.measuredAt.toISOString() : null,
    ]
      .map(csvCell)
      .join(','),
  );
  return [CSV_HEADER.join(','), ...rows].join('\r\n') + '\r\n';
}
