/**
 * The contract's numbers and lists as plain constants, with no TypeBox: the schemas use them
 * (common.ts, queries.ts, account.ts) and so can the renderer's forms without bundling a schema.
 */

/**
 * The deepest gauge reading taken, in mm, by PUT /measurement, PATCH and the sync wire alike
 * (docs/API.md §9, item 9): no passenger or light-truck tread is deeper.
 */
export const MAX_MEASUREMENT_MM = 30;
/** docs/API.md §2: an uploaded image (analyze, the capture check, a sync push) is at most 10 MiB. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** A vehicle (plate) as typed: at most this many printable characters. */
export const VEHICLE_MAX = 64;
/** An API key's name: at most this many characters. */
export const KEY_NAME_MAX = 64;
/** The shop's name in the settings (printed on the customer sheet): at most this many characters. */
export const SHOP_NAME_MAX = 80;

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
/** GET /sync/scans (hub) and /sync/hub-scans (desk): the chain's scans a page when no limit is given (at most MAX_PAGE). */
export const DEFAULT_CHAIN_PAGE = 50;
/** GET /vehicles: groups a page, and the newest scans given with each. */
export const DEFAULT_VEHICLE_PAGE = 20;
export const MAX_VEHICLE_PAGE = 50;
export const DEFAULT_SCANS_PER_VEHICLE = 8;
export const MAX_SCANS_PER_VEHICLE = 20;

/** The dialects of the CSV export (src/core/services/support/csv.ts writes them). */
export const CSV_FORMATS = ['csv', 'excel', 'excel-semicolon'] as const;
export type CsvFormat = (typeof CSV_FORMATS)[number];
