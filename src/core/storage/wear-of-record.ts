/**
 * The `wear` filter of the scan lists, the vehicle view and the export (issue 42: "the gauge wins
 * where it exists"): a scan matches by the band of its depth of record, which is what its badge
 * shows (`ofRecord.wear`, http/wire.ts): the band of the gauge reading where there is one
 * (wearForDepth(measurementMm)), else the photo estimate's band as analysed (`result.wear`,
 * kept in the `wear` column).
 *
 * Computed in the query rather than stored: the estimate's band and the reading are both columns
 * already, so nothing new can fall out of step with them (a correction, PUT /measurement, a sync
 * merge, a hub's push all write `measurement_mm`), no migration or backfill is needed, and nothing
 * lost: the filter never had an index (a list runs on the account's scans in date order and tests
 * the filter per row). SQLite and PostgreSQL read this expression alike: `measurement_mm` is a REAL /
 * double precision and the floors are compared as doubles, as wearForDepth compares the same value.
 */
import { WEAR_FLOORS_MM } from '../../shared/units.js';

/** SQL for the wear band of a scan row's depth of record (columns `wear`, `measurement_mm`). */
export const WEAR_OF_RECORD_SQL =
  '(CASE WHEN measurement_mm IS NULL THEN wear' +
  WEAR_FLOORS_MM.map(([wear, floor]) => ` WHEN measurement_mm >= ${String(floor)} THEN '${wear}'`).join('') +
  " ELSE 'critical' END)";
