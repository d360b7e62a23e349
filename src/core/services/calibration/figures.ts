/** What the calibration status shows: each model's figures against the gauge, the active calibration, the fit. */
import type { CalibrationFit, CalibrationStatus } from '../../../shared/api.js';
import { wearForDepth } from '../../analysis/analyzer.js';
import { isRecord } from '../../analysis/manifest.js';
import type { ShopCalibrationRecord, ShopFit } from '../../analysis/shop-calibration.js';
import type { ScanRecord } from '../../types.js';

/** The fit as the wire carries it: everything but the fit over all tires and a reader's weights (`correction` is what was written). */
export function wireFit({ fitted: _all, reader: _weights, ...fit }: ShopFit): CalibrationFit {
  return fit;
}

/** Each model version's stored estimates against the gauge readings, most scans first. */
export function byModel(scans: ScanRecord[]): CalibrationStatus['byModel'] {
  const groups = new Map<string, ScanRecord[]>();
  for (const scan of scans) {
    if (scan.measurementMm === null) continue;
    const group = groups.get(scan.result.modelVersion);
    if (group) group.push(scan);
    else groups.set(scan.result.modelVersion, [scan]);
  }
  return [...groups.entries()]
    .map(([modelVersion, group]) => {
      const errors = group.map((s) => Math.abs(s.result.estimatedDepthMm - s.measurementMm!));
      return {
        modelVersion,
        scans: group.length,
        mae: Math.round((errors.reduce((a, b) => a + b, 0) / group.length) * 1000) / 1000,
        within1mm: errors.filter((e) => e <= 1 + 1e-9).length / group.length,
        wearAccuracy: group.filter((s) => s.result.wear === wearForDepth(s.measurementMm!)).length / group.length,
      };
    })
    .sort((a, b) => b.scans - a.scans || a.modelVersion.localeCompare(b.modelVersion));
}

const numbers = (v: unknown, keys: string[]): boolean => isRecord(v) && keys.every((k) => typeof v[k] === 'number');

/**
 * What the status shows of a manifest's shop calibration, or null: none, or a record edited by
 * hand (or written by another tool) that lacks what the status shows.
 */
export function activeCalibration(manifest: Record<string, unknown> | null): CalibrationStatus['active'] {
  const r = manifest?.shopCalibration;
  if (!isRecord(r) || typeof manifest?.version !== 'string' || typeof r.base !== 'string' || typeof r.created !== 'string') return null;
  const figures = ['mae', 'within1mm', 'coverage', 'wearAccuracy'];
  const cv = r.crossValidated;
  if (typeof r.tires !== 'number' || !numbers(r.correction, ['intercept', 'slope', 'intervalScale']) || !isRecord(cv)) return null;
  if (!numbers(cv.before, figures) || !numbers(cv.after, figures)) return null;
  const record = r as unknown as ShopCalibrationRecord;
  return {
    version: manifest.version,
    base: record.base,
    created: record.created,
    tires: record.tires,
    correction: record.correction,
    // a reader of the shop's own (since tread-2026.11.29.4) replaces the correction
    reader: isRecord(record.reader),
    crossValidated: { before: record.crossValidated.before, after: record.crossValidated.after },
  };
}
