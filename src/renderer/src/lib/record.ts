/**
 * The depth of record: a shop's gauge reading wins over the photo estimate wherever one exists
 * (its colour, advice, 32nds, health and no "preliminary"), the estimate staying beside it. The
 * same rule as the server's `ofRecord` (issue 42), computed here so that a reading saved a moment
 * ago on a fresh card needs no second download.
 */
import type { WireResult, WireWear } from '../../../shared/api';
import { wearForDepth } from '../../../shared/units';

export interface DepthOfRecord {
  mm: number;
  source: 'gauge' | 'estimate';
  wear: WireWear;
  treadHealthIndex: number;
  isPreliminary: boolean;
}

/** docs/API.md §2's health index of a depth. */
function healthIndex(mm: number): number {
  return Math.round(Math.min(100, Math.max(0, ((mm - 1.6) / (8.0 - 1.6)) * 100)));
}

export function depthOfRecord(scan: { result: WireResult; measurementMm: number | null }): DepthOfRecord {
  const { result, measurementMm } = scan;
  if (measurementMm === null) {
    return {
      mm: result.estimatedDepthMm,
      source: 'estimate',
      wear: result.wear,
      treadHealthIndex: result.treadHealthIndex,
      isPreliminary: result.isPreliminary,
    };
  }
  return { mm: measurementMm, source: 'gauge', wear: wearForDepth(measurementMm), treadHealthIndex: healthIndex(measurementMm), isPreliminary: false };
}
