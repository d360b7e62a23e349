/**
 * A shop's own calibration: the shipped models read the shop's photos (its phones, its light, its
 * tires), and the gauge readings the shop recorded say how far off they are. What can be learnt
 * safely from a few dozen to a few thousand such pairs is the last, linear step of the model:
 *
 * - a depth correction `gauge ≈ intercept + slope · estimate`, fitted by least absolute error
 *   (as the shipped stack is; a gauge misread by 3 mm moves it little), slope kept within
 *   [MIN_SLOPE, MAX_SLOPE];
 * - a width factor for the 80 % interval, so that it holds four readings in five on these photos.
 *
 * Both are judged by cross-validation (each fold's photos are read with a correction fitted on the
 * others), and each is kept only when it helps there: the depth correction when it lowers the mean
 * error by at least MIN_GAIN_MM, the interval factor when the interval's coverage is outside 75–85 % by
 * more than chance (two binomial standard errors of 80 % on that many tires) and the factor brings
 * it nearer 80 %. Since the correction is linear it folds into the manifest's stack (every weight
 * times the slope, the intercept mapped too) and interval constant (times the slope and the
 * factor), so the networks and the app's code stay what they were, and the rest of a result (wear
 * class, confidence, tread health, agreement) follows from the corrected depth as it always does.
 *
 * The networks themselves are not retrained: a correction cannot teach them what they do not see
 * (models/README.md, Known limits), it removes a shop's systematic offset.
 */
import type { Analysis } from './analyzer.js';
import { wearForDepth } from './analyzer.js';
import { fitReader, quantile, type ShopReader } from './shop-reader.js';

export const MIN_TIRES = 30;
export const FOLDS = 5;
export const MIN_GAIN_MM = 0.05;
export const MIN_SLOPE = 0.5;
export const MAX_SLOPE = 2;
const COVERAGE_BAND: [number, number] = [0.75, 0.85];
const COVERAGE_TARGET = 0.8;

/** One tire the model answered: the gauge reading and what the model said. */
export interface ShopPoint {
  gaugeMm: number;
  estimateMm: number;
  /** The reported 80 % interval. */
  rangeMm: { min: number; max: number };
  /**
   * The interval is not the estimate ± a half-width: the scene reader's whole depth scale, given to
   * a photo unlike those its wear reading learned from (scene.ts, since tread-2026.11.29.3), or the
   * mixture of two readings that disagree (since 2026-11-29). It takes no part in the interval
   * factor, and is judged as reported, moved with the depth line (the app moves the whole scale so
   * and never resizes it; a mixture's two readings it moves with the line, and its spread it also
   * scales by the factor, which the fit judged on the other photos).
   */
  fixedInterval?: boolean;
  /** The scene network's features for the photo (scene models since tread-2026.11.29.4): what a shop's reader is fitted on. */
  features?: Float32Array;
}

/**
 * The narrowest interval read as the whole scale: that one is 0.8–8.0 mm (7.2 mm wide) as the
 * shipped models give it, an ordinary one ± 1.2816 × 1.5 mm (at most 3.9 mm wide after rounding).
 * The photos are read by the models as shipped, without a shop's line (calibration/photos.ts).
 */
export const WHOLE_SCALE_MIN_WIDTH_MM = 6;

export const pointFrom = (
  gaugeMm: number,
  analysis: Pick<Analysis, 'estimatedDepthMm' | 'depthRangeMm' | 'isPreliminary' | 'preliminaryReasons'>,
  features?: Float32Array,
): ShopPoint => ({
  gaugeMm,
  estimateMm: analysis.estimatedDepthMm,
  rangeMm: { ...analysis.depthRangeMm },
  ...(analysis.isPreliminary &&
  (analysis.depthRangeMm.max - analysis.depthRangeMm.min >= WHOLE_SCALE_MIN_WIDTH_MM || analysis.preliminaryReasons?.includes('models_disagree'))
    ? { fixedInterval: true }
    : {}),
  ...(features ? { features } : {}),
});

export interface Correction {
  intercept: number;
  slope: number;
  /** Multiplies the interval's half-width (after the slope's own scaling). */
  intervalScale: number;
}

export const IDENTITY: Correction = { intercept: 0, slope: 1, intervalScale: 1 };

export interface Figures {
  mae: number;
  within1mm: number;
  coverage: number;
  wearAccuracy: number;
}

export interface ShopFit {
  tires: number;
  /**
   * A shop's own reader (shop-reader.ts) replaces the line: kept when its cross-validated error is
   * at least MIN_GAIN_MM under the line's (fitShopCalibrationWithReader). Then `correction` is the
   * identity and `after` the reader's figures. False where only the line was fitted.
   */
  readerApplied: boolean;
  /** The reader fitted on all the photos, when it is applied. */
  reader?: ShopReader;
  /** What is written: the depth part is the identity unless `depthApplied`, the scale 1 unless `intervalApplied`. */
  correction: Correction;
  depthApplied: boolean;
  intervalApplied: boolean;
  /** The fit over all tires, whether applied or not (for the report). */
  fitted: Correction;
  /** Cross-validated: the model as shipped, and with the correction as written. */
  before: Figures;
  after: Figures;
  /** Why each part was kept or left out, in words. */
  reasons: string[];
}

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const absError = (points: ShopPoint[], a: number, b: number): number => points.reduce((s, p) => s + Math.abs(p.gaugeMm - (a + b * p.estimateMm)), 0);

/**
 * Least absolute error line gauge ≈ a + b · estimate with b in [MIN_SLOPE, MAX_SLOPE]. For a fixed
 * slope the best intercept is the median residual, and the error left is convex in the slope, so a
 * ternary search over the slope finds the optimum. Estimates that do not vary leave only an offset.
 */
export function fitLine(points: ShopPoint[]): { intercept: number; slope: number } {
  const offset = (b: number): number => median(points.map((p) => p.gaugeMm - b * p.estimateMm));
  const xs = points.map((p) => p.estimateMm);
  if (Math.max(...xs) - Math.min(...xs) < 0.2) return { intercept: offset(1), slope: 1 };
  const cost = (b: number): number => absError(points, offset(b), b);
  let [lo, hi] = [MIN_SLOPE, MAX_SLOPE];
  for (let i = 0; i < 80; i++) {
    const m1 = lo + (hi - lo) / 3;
    const m2 = hi - (hi - lo) / 3;
    if (cost(m1) <= cost(m2)) hi = m2;
    else lo = m1;
  }
  const slope = (lo + hi) / 2;
  return { intercept: offset(slope), slope };
}

/** Half-width of a point's reported interval around its estimate (the upper side: the lower is cut at 0 mm). */
const halfWidth = (p: ShopPoint): number => Math.max(0.05, p.rangeMm.max - p.estimateMm);

/**
 * The factor that makes |gauge − corrected| ≤ factor · slope · half-width hold for 80 % of the points
 * whose interval it resizes (1 when there are none: every interval is the whole scale).
 */
function intervalScale(points: ShopPoint[], a: number, b: number): number {
  const sized = points.filter((p) => !p.fixedInterval);
  if (!sized.length) return 1;
  return quantile(
    sized.map((p) => Math.abs(p.gaugeMm - (a + b * p.estimateMm)) / (b * halfWidth(p))),
    COVERAGE_TARGET,
  );
}

function fit(points: ShopPoint[], withDepth: boolean): Correction {
  const { intercept, slope } = withDepth ? fitLine(points) : { intercept: 0, slope: 1 };
  return { intercept, slope, intervalScale: intervalScale(points, intercept, slope) };
}

/** What a correction makes of a point: the estimate (never below 0 mm, as the app clips) and whether the interval holds the gauge. */
function read(p: ShopPoint, c: Correction, withInterval: boolean): { estimate: number; covered: boolean } {
  const estimate = Math.max(0, c.intercept + c.slope * p.estimateMm);
  if (!withInterval || p.fixedInterval) {
    // the interval as reported, moved with the estimate
    const covered = p.gaugeMm >= c.intercept + c.slope * p.rangeMm.min - 1e-9 && p.gaugeMm <= c.intercept + c.slope * p.rangeMm.max + 1e-9;
    return { estimate, covered };
  }
  return { estimate, covered: Math.abs(p.gaugeMm - (c.intercept + c.slope * p.estimateMm)) <= c.intervalScale * c.slope * halfWidth(p) + 1e-9 };
}

function figures(reads: { p: ShopPoint; estimate: number; covered: boolean }[]): Figures {
  const n = reads.length;
  const err = reads.map((r) => Math.abs(r.estimate - r.p.gaugeMm));
  return {
    mae: err.reduce((s, e) => s + e, 0) / n,
    within1mm: err.filter((e) => e <= 1).length / n,
    coverage: reads.filter((r) => r.covered).length / n,
    wearAccuracy: reads.filter((r) => wearForDepth(Math.round(r.estimate * 10) / 10) === wearForDepth(r.p.gaugeMm)).length / n,
  };
}

/** Each point read by a correction fitted without its fold (point i is in fold i mod FOLDS). */
function crossValidated(points: ShopPoint[], withDepth: boolean, withInterval: boolean): Figures {
  const reads: { p: ShopPoint; estimate: number; covered: boolean }[] = [];
  for (let k = 0; k < FOLDS; k++) {
    const train = points.filter((_, i) => i % FOLDS !== k);
    const c = fit(train, withDepth);
    points.forEach((p, i) => {
      if (i % FOLDS === k) reads.push({ p, ...read(p, c, withInterval) });
    });
  }
  return figures(reads);
}

const mm = (v: number): string => `${v.toFixed(2)} mm`;
const pct = (v: number): string => `${(100 * v).toFixed(1)} %`;

/** Fits, cross-validates and decides (module comment). Throws when there are fewer than MIN_TIRES points. */
export function fitShopCalibration(points: ShopPoint[]): ShopFit {
  if (points.length < MIN_TIRES) throw new RangeError(`at least ${MIN_TIRES} tires with a gauge reading and an answer are needed, got ${points.length}`);
  const before = crossValidated(points, false, false);
  const depthOnly = crossValidated(points, true, false);
  const depthApplied = depthOnly.mae <= before.mae - MIN_GAIN_MM;
  const reasons = [
    depthApplied
      ? `depth corrected: cross-validated error ${mm(before.mae)} → ${mm(depthOnly.mae)}`
      : `depth left as it is: a correction would change the cross-validated error ${mm(before.mae)} → ${mm(depthOnly.mae)} (less than ${mm(MIN_GAIN_MM)} better)`,
  ];
  const base = depthApplied ? depthOnly : before;
  const widened = crossValidated(points, depthApplied, true);
  // outside 75–85 %, and by more than chance allows on this many photos (two binomial standard errors)
  const outside =
    (base.coverage < COVERAGE_BAND[0] || base.coverage > COVERAGE_BAND[1]) &&
    Math.abs(base.coverage - COVERAGE_TARGET) > 2 * Math.sqrt((COVERAGE_TARGET * (1 - COVERAGE_TARGET)) / points.length);
  const intervalApplied = outside && Math.abs(widened.coverage - COVERAGE_TARGET) < Math.abs(base.coverage - COVERAGE_TARGET);
  reasons.push(
    intervalApplied
      ? `interval resized: cross-validated coverage ${pct(base.coverage)} → ${pct(widened.coverage)} (target 80 %)`
      : outside
        ? `interval left as it is: resizing it would not bring its coverage (${pct(base.coverage)}) nearer 80 % (${pct(widened.coverage)})`
        : `interval left as it is: its coverage ${pct(base.coverage)} is within 75–85 % or within chance of 80 % on ${points.length} tires`,
  );
  const fitted = fit(points, true);
  const chosen = depthApplied ? fitted : fit(points, false);
  const correction: Correction = {
    intercept: depthApplied ? chosen.intercept : 0,
    slope: depthApplied ? chosen.slope : 1,
    intervalScale: intervalApplied ? chosen.intervalScale : 1,
  };
  return {
    tires: points.length,
    readerApplied: false,
    correction,
    depthApplied,
    intervalApplied,
    fitted,
    before,
    after: intervalApplied ? widened : base,
    reasons,
  };
}

/**
 * The photos a shop's own reader needs at the least: it fits 3 296 weights (ridge-held), and on
 * michelin-twi 50 photos of other days ordered a day's close-ups at about 0.6 (docs/CALIBRATION.md).
 */
export const MIN_READER_TIRES = 50;
/**
 * At most this many photos, the latest, fit a reader: its cost grows with the cube of the count
 * (1 500 photos: about 20 s of a core, the server's requests let in between steps; bench/shop-reader.ts).
 */
export const MAX_READER_TIRES = 1500;
/**
 * Fewer worn readings (under 3.0 mm) than this, and the reason list says the reader has seen few
 * worn tires: ridge reads the ends toward the middle, and on michelin-twi tread planed to the
 * indicator (13 photos) read 4.2 mm (docs/CALIBRATION.md).
 */
export const FEW_WORN_READINGS = 10;

/** The caution FEW_WORN_READINGS asks for, or nothing. */
function fewWorn(points: ShopPoint[]): string[] {
  const worn = points.filter((p) => p.gaugeMm < 3).length;
  return worn >= FEW_WORN_READINGS
    ? []
    : [
        `only ${worn} of the readings are under 3.0 mm: the reader has seen few worn tires and reads them toward the middle; ` +
          'enter gauge readings of worn tires too, and calibrate again',
      ];
}

/**
 * fitShopCalibration, then, where the photos carry the scene network's features, a shop's own
 * reader (shop-reader.ts) cross-validated against it: kept, in place of the line, when its
 * cross-validated error is at least MIN_GAIN_MM under the better of the models as shipped and the
 * line. Its folds are blocks of photos in the order they were taken (shop-reader.ts blockOf):
 * stricter than the line's, never kinder to the reader.
 */
export async function fitShopCalibrationWithReader(points: ShopPoint[]): Promise<ShopFit> {
  const line = fitShopCalibration(points);
  const withFeatures = points.filter((p) => p.features !== undefined);
  if (withFeatures.length < points.length) {
    line.reasons.push(
      withFeatures.length === 0
        ? "no reader of the shop's own: these models give no features to fit one on (scene models since tread-2026.11.29.4)"
        : `no reader of the shop's own: ${points.length - withFeatures.length} of the photos were read without features`,
    );
    return line;
  }
  if (points.length < MIN_READER_TIRES) {
    line.reasons.push(`no reader of the shop's own: it needs at least ${MIN_READER_TIRES} photos, ${points.length} have a reading`);
    return line;
  }
  const used = points.slice(-MAX_READER_TIRES);
  const { reader, crossValidated, covered } = await fitReader(
    used.map((p) => p.features!),
    used.map((p) => p.gaugeMm),
    FOLDS,
  );
  const read = (estimate: number, i: number) => ({ p: used[i]!, estimate: Math.max(0, estimate), covered: covered[i]! });
  const own = figures(crossValidated.map(read));
  const best = Math.min(line.before.mae, line.after.mae);
  if (!(own.mae <= best - MIN_GAIN_MM)) {
    line.reasons.push(
      `no reader of the shop's own: its cross-validated error ${mm(own.mae)} is not ${mm(MIN_GAIN_MM)} under ${mm(best)} (${used.length} photos)`,
    );
    return line;
  }
  return {
    ...line,
    readerApplied: true,
    reader,
    correction: IDENTITY,
    depthApplied: false,
    intervalApplied: false,
    after: own,
    reasons: [
      `a reader of the shop's own reads the depth from the models' features: cross-validated error ${mm(own.mae)}, ` +
        `against ${mm(line.before.mae)} as shipped${line.depthApplied || line.intervalApplied ? ` and ${mm(line.after.mae)} with a line` : ''}` +
        (used.length < points.length ? ` (fitted and measured on the latest ${used.length} photos)` : '') +
        `; within 1 mm ${pct(own.within1mm)}, 80 % interval ± ${mm(reader.halfWidthMm)} (coverage ${pct(own.coverage)})`,
      ...fewWorn(used),
      ...line.reasons.map((r) => `(in its place) ${r}`),
    ],
  };
}

type Json = Record<string, unknown>;
const STACK_WEIGHTS = ['regressor', 'dense', 'classifier', 'crop', 'size'] as const;

function correctedStack(stack: unknown, c: Correction, where: string): Json {
  if (typeof stack !== 'object' || stack === null) throw new TypeError(`manifest calibration.${where} is missing`);
  const s = stack as Json;
  const out: Json = { ...s, intercept: c.intercept + c.slope * Number(s.intercept) };
  for (const k of STACK_WEIGHTS) if (s[k] !== undefined) out[k] = c.slope * Number(s[k]);
  return out;
}

export interface ShopCalibrationRecord {
  base: string;
  created: string;
  tires: number;
  /** A shop's own reader is in calibration.scene.shopReader (its weights there; here what it is). */
  reader?: { halfWidthMm: number; lambda: number; features: number };
  /** sha256 of the labels the fit read, so the folder it came from can be recognised. */
  labelsSha256: string | null;
  correction: Correction;
  crossValidated: { before: Figures; after: Figures };
  reasons: string[];
}

/** The version of a calibration of `base` made at `created`: `tread-2026.11.12+shop.20261124T0530`. */
export function shopVersion(base: string, created: Date): string {
  return `${base}+shop.${created.toISOString().replace(/[-:]/g, '').slice(0, 13)}`;
}

/**
 * The shipped manifest (as parsed JSON, unknown fields kept) with the correction folded into its
 * stacks and interval: `estimate' = intercept + slope · estimate` for any photo, and the interval's
 * half-width times slope · intervalScale. The model files and their checksums are the base's.
 */
export function calibratedManifest(base: Json, fitResult: ShopFit, meta: { created: Date; labelsSha256: string | null }): Json {
  if (typeof base.version !== 'string') throw new TypeError('manifest has no version');
  if (base.shopCalibration !== undefined) throw new TypeError('manifest is already a shop calibration');
  const cal = base.calibration as Json;
  const c = fitResult.correction;
  if (fitResult.reader && cal.scene === undefined) throw new TypeError("a shop's reader needs a manifest with a scene reader");
  const record: ShopCalibrationRecord = {
    base: base.version,
    created: meta.created.toISOString(),
    tires: fitResult.tires,
    ...(fitResult.reader
      ? { reader: { halfWidthMm: fitResult.reader.halfWidthMm, lambda: fitResult.reader.lambda, features: fitResult.reader.weights.length } }
      : {}),
    labelsSha256: meta.labelsSha256,
    correction: c,
    crossValidated: { before: fitResult.before, after: fitResult.after },
    reasons: fitResult.reasons,
  };
  return {
    ...base,
    version: shopVersion(base.version, meta.created),
    created: meta.created.toISOString(),
    calibration: {
      ...cal,
      stack: correctedStack(cal.stack, c, 'stack'),
      stackWithoutDense: correctedStack(cal.stackWithoutDense, c, 'stackWithoutDense'),
      intervalK: Number(cal.intervalK) * c.slope * c.intervalScale,
      // the classifier's vote, read on the same corrected depths (combine.ts, voteFor)
      ...(fitResult.depthApplied ? { voteMap: { intercept: c.intercept, slope: c.slope } } : {}),
      // the scene reader's estimate (scene.ts) takes the same line and interval factor
      // (or, in its place, the shop's own reader: scene.ts)
      ...(cal.scene === undefined
        ? {}
        : {
            scene: {
              ...(cal.scene as Json),
              shopLine: { intercept: c.intercept, slope: c.slope, intervalScale: c.intervalScale },
              ...(fitResult.reader ? { shopReader: fitResult.reader } : {}),
            },
          }),
    },
    shopCalibration: record,
  };
}

export function formatFit(f: ShopFit): string {
  const row = (name: string, x: Figures) =>
    `  ${name.padEnd(22)} ${mm(x.mae).padStart(8)}  ${pct(x.within1mm).padStart(7)}  ${pct(x.wearAccuracy).padStart(7)}  ${pct(x.coverage).padStart(7)}`;
  const fitted = f.fitted;
  return [
    `${f.tires} tires with a gauge reading and an answer; ${FOLDS}-fold cross-validation (each photo read with a correction fitted without it):`,
    `  ${''.padEnd(22)} ${'MAE'.padStart(8)}  ${'≤ 1 mm'.padStart(7)}  ${'wear'.padStart(7)}  ${'80 % int.'.padStart(7)}`,
    row('as shipped', f.before),
    row(f.readerApplied ? "with the shop's reader" : 'with this calibration', f.after),
    f.reader
      ? `the shop's reader, fitted on all ${f.tires}: ${f.reader.weights.length} features, ridge penalty ${f.reader.lambda}, 80 % interval ± ${f.reader.halfWidthMm.toFixed(2)} mm`
      : `fitted on all ${f.tires}: gauge ≈ ${fitted.intercept.toFixed(3)} + ${fitted.slope.toFixed(3)} × estimate, interval × ${fitted.intervalScale.toFixed(3)}`,
    ...f.reasons.map((r) => `- ${r}`),
    '',
  ].join('\n');
}
