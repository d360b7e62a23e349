import type { CsvFormat } from './contract/limits.js';

/**
 * The CSV dialect the counter asks the export for (core/services/support/csv.ts): `excel-semicolon` where
 * numbers are written with a decimal comma (Excel there separates a list with semicolons), else
 * `excel`: a file a double-click opens in columns, accents intact.
 */
export function excelCsvFormat(locale?: string): Exclude<CsvFormat, 'csv'> {
  const decimal = new Intl.NumberFormat(locale).formatToParts(1.5).find((part) => part.type === 'decimal')?.value;
  return decimal === ',' ? 'excel-semicolon' : 'excel';
}
