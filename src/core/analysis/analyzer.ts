/**
 * The seam between the HTTP service and the tread models.
 *
 * The service validates the upload (magic bytes, size, decodability, pixel
 * limits) before calling `analyze`; the analyzer decodes again at the size its
 * models need. Everything in `Analysis` is computed from the image: the
 * service adds `processingTimeMs` and `disclaimer` itself.
 */

import type { WireAnalysis } from '../../shared/api.js';
import { MAX_MEASUREMENT_MM } from '../../shared/contract/limits.js';

export { WEAR_CLASSES, wearForDepth, type Wear } from '../../shared/units.js';

/** docs/API.md §2: clamp((depth - 1.6) / (8.0 - 1.6) * 100, 0, 100), integer. */
export function treadHealthIndex(depthMm: number): number {
  return Math.round(Math.min(100, Math.max(0, ((depthMm - 1.6) / (8.0 - 1.6)) * 100)));
}

export { MM_PER_32ND } from '../../shared/units.js';

/**
 * Deeper than any passenger or light-truck tread, new (TIRES.md): a larger reading is a unit
 * mistake. The same bound as the gauge readings the API takes (the contract's one limit).
 */
export const MAX_TREAD_DEPTH_MM = MAX_MEASUREMENT_MM;

/** A located feature, in the uploaded image's pixel coordinates (EXIF orientation applied). */
export interface AnalysisPoint {
  kind: 'twi' | 'groove' | (string & {});
  x: number;
  y: number;
  [extra: string]: unknown;
}

/** What the models tell from one photo, as the API gives it (the service adds processingTimeMs and disclaimer). */
export type Analysis = WireAnalysis;

export interface VerboseExtras {
  /** Named PNG data URLs (`data:image/png;base64,...`), at least `depthHeatmap` and `mask`. */
  overlays: Record<string, string>;
  points: AnalysisPoint[];
}

/**
 * The upload decoded once by the scan service: upright (EXIF applied), RGB, 8 bits, scaled with
 * shrink-on-load to 400-640 px on the long side (images/inspect.ts, frameLongSide). The
 * thumbnail and the model input both come from it.
 */
export interface DecodedFrame {
  data: Buffer;
  width: number;
  height: number;
  /** Upright size of the upload itself, for points in its pixel coordinates. */
  uprightWidth: number;
  uprightHeight: number;
}

export interface AnalyzeRequest {
  /** The uploaded bytes, already known to be JPEG, PNG or WebP and decodable. */
  image: Buffer;
  verbose: boolean;
  /** When given, the analyzer uses these pixels instead of decoding `image` again. */
  frame?: DecodedFrame;
  /** Give the scene reader's features too (AnalyzeOutcome.features): a shop calibration fits its reader on them. */
  features?: boolean;
}

export interface AnalyzeOutcome {
  analysis: Analysis;
  /** Present when `verbose` was requested. */
  verbose?: VerboseExtras;
  /**
   * The scene reader's pooled features (scene models since tread-2026.11.29.4), when `features` was
   * requested and the models give them: what a shop's own reader is fitted on (shop-reader.ts).
   */
  features?: Float32Array;
}

/**
 * What the scene reader (the gate) sees in a photo, without reading a depth: a tread to read, a
 * tire whose tread cannot be read (a side view of a wheel, a whole car, too far, blurred, dark), or
 * no tire. Probabilities sum to 1; `scene` is the outcome `analyze` would act on.
 */
export interface SceneReading {
  scene: 'tread' | 'tread_not_visible' | 'no_tire';
  probabilities: { tread: number; treadNotVisible: number; noTire: number };
}

export interface Analyzer {
  readonly modelVersion: string;
  /**
   * The gate alone (cheap: no depth, nothing stored), for the live capture check. Optional so that
   * older analyzers and test fakes without a scene reader still satisfy the interface.
   */
  scene?(request: AnalyzeRequest): Promise<SceneReading>;
  /**
   * Throws AppError NO_TIRE_DETECTED when the image shows no tire, TREAD_NOT_VISIBLE when it shows
   * a tire whose tread cannot be read (side view, whole car, too far, blurred, dark),
   * IMAGE_UNREADABLE when the bytes cannot be decoded, MODEL_UNAVAILABLE
   * when the models could not be loaded.
   */
  analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome>;
  close(): Promise<void>;
}
