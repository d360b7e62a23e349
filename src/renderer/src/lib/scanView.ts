/** One scan as the cards and the report show it, whether just analysed or read from history. */
import type { AnalyzeData, ScanChange, WirePosition, WireResult, WireScan } from '../../../shared/api';
import { api } from '../api/client';

export interface ScanView {
  scanId: string;
  createdAt: string;
  vehicle: string | null;
  position: WirePosition | null;
  result: WireResult;
  imageSrc: string;
  measurementMm: number | null;
  /** Corrections of plate, position and gauge reading, oldest first (read from the history). */
  changes?: ScanChange[];
}

export function fromWireScan(scan: WireScan): ScanView {
  return {
    scanId: scan.scanId,
    createdAt: scan.createdAt,
    vehicle: scan.vehicle,
    position: scan.position,
    result: scan.result,
    imageSrc: scan.image.url || api.imageUrl(scan.scanId),
    measurementMm: scan.measurementMm,
    changes: scan.changes,
  };
}

/** A fresh analysis: the photo comes from the local file, no second download. */
export function fromAnalysis(data: AnalyzeData, localSrc: string, vehicle: string, position: WirePosition | ''): ScanView {
  return {
    scanId: data.scanId,
    createdAt: new Date().toISOString(),
    vehicle: vehicle || null,
    position: position || null,
    result: data.result,
    imageSrc: localSrc,
    measurementMm: null,
  };
}
