/**
 * CSV export of a shop's scans with their gauge readings: RFC 4180 (CRLF, quotes
 * doubled) and safe to open in a spreadsheet: a cell that starts with = + - @ tab or CR
 * gets a leading apostrophe so it is shown as text, never run as a formula.
 */
import type { ScanRecord } from '../../types.js';
import type { CsvFormat } from '../../../shared/contract/limits.js';

/**
 * The depth a scan stands for: the gauge reading where there is one, else the estimate (the
 * same rule as the wire's depthOfRecordMm, http/wire.ts), and whether it is still preliminary.
 */
function ofRecord(scan: ScanRecord): { depthMm: number; isPreliminary: boolean; reasons: string } {
  return scan.measurementMm === null
    ? { depthMm: scan.result.estimatedDepthMm, isPreliminary: scan.result.isPreliminary, reasons: (scan.result.preliminaryReasons ?? []).join(' ') }
    : { depthMm: scan.measurementMm, isPreliminary: false, reasons: '' };
}

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
  'depthOfRecordMm',
  'isPreliminary',
  'measuredAt',
  'preliminaryReasons',
] as const;

/**
 * How the file is written. `csv` (the default): RFC 4180 as above, for software. `excel`: the same
 * with a UTF-8 byte-order mark in front, without which Excel on Windows reads the file in the
 * computer's ANSI code page (ü, é, ñ in a vehicle garbled). `excel-semicolon`: that, separated by
 * semicolons with decimal commas (4,2), as Excel opens a file by double-click where the decimal
 * separator is a comma (Germany, France, Italy, Spain…: otherwise one column).
 */
export type { CsvFormat };

export function csvCell(value: string | number | boolean | null, separator: ',' | ';' = ','): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  const special = separator === ',' ? /[",\r\n]/ : /[";\r\n]/;
  return special.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function scansToCsv(scans: readonly ScanRecord[], format: CsvFormat = 'csv'): string {
  const separator = format === 'excel-semicolon' ? ';' : ',';
  const cell = (value: string | number | boolean | null) =>
    csvCell(typeof value === 'number' && separator === ';' ? String(value).replace('.', ',') : value, separator);
  const rows = scans.map((s) => {
    const record = ofRecord(s);
    return [
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
      record.depthMm,
      record.isPreliminary,
      s.measuredAt ? s.measuredAt.toISOString() : null,
      record.reasons,
    ]
      .map(cell)
      .join(separator);
  });
  const text = [CSV_HEADER.join(separator), ...rows].join('\r\n') + '\r\n';
  return format === 'csv' ? text : `\uFEFF${text}`;
}
