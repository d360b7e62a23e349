/**
 * Network outputs → the result fields of docs/API.md §2. Pure arithmetic; the
 * formulas and their fitted constants come from models/training/finalize.py
 * (manifest.calibration), so the app reports what validation measured.
 */
import { AppError } from '../errors.js';
import { whole32nds } from '../../shared/units.js';
import type { PreliminaryReason } from '../../shared/contract/analyze.js';
import { MAX_TREAD_DEPTH_MM, treadHealthIndex, wearForDepth, WEAR_CLASSES, type Analysis, type Wear } from './analyzer.js';
import type { Calibration } from './manifest.js';
import { findTwiBars, type MaskMaps } from './mask.js';

export interface TreadOutput {
  gate: number;
  depthMm: number;
  sigmaMm: number;
  wearLogits: number[];
}

/** The standard normal's 90th percentile: an 80 % central interval is ± Z80 standard deviations. */
export const Z80 = 1.2815516;
/** Below this share of the frame showing tread, the tread is "barely visible" (docs/API.md §2 isPreliminary). */
export const MIN_TREAD_SHARE = 0.05;
/** Depth disagreement between the two estimators at which their agreement counts as zero. */
export const FULL_DISAGREEMENT_MM = 3;
/** Each wear band's depths, mm (docs/API.md §2). */
export const BAND_LIMITS: Record<Wear, [number, number]> = {
  new: [7.0, Infinity],
  good: [5.0, 7.0],
  medium: [3.0, 5.0],
  worn: [1.6, 3.0],
  critical: [-Infinity, 1.6],
};

/** The depths each class of the classifier's vote stands for (new … critical), taken as uniform within. */
const VOTE_BANDS: Array<[number, number]> = [
  [7.0, 10.0],
  [5.0, 7.0],
  [3.0, 5.0],
  [1.6, 3.0],
  [0.0, 1.6],
];

/**
 * The classifier's probability that the depth is in `wear`'s band. Without a map that is the
 * class's own probability. With a shop calibration's line, class i stands for the depths
 * intercept + slope × VOTE_BANDS[i], and each class gives the share of its (uniform) span that
 * falls in the band: the vote then speaks of the same depths as the corrected estimate.
 */
export function voteFor(wear: Wear, probs: number[], map: Calibration['voteMap']): number {
  const own = probs[WEAR_CLASSES.indexOf(wear)] ?? 0;
  if (!map) return own;
  const [lo, hi] = BAND_LIMITS[wear];
  return probs.reduce((sum, p, i) => {
    const [from, to] = VOTE_BANDS[i]!;
    const a = map.intercept + map.slope * from;
    const b = map.intercept + map.slope * to;
    return sum + (p * Math.max(0, Math.min(hi, b) - Math.max(lo, a))) / (b - a);
  }, 0);
}

function erf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x >= 0 ? y : -y;
}

export const normalCdf = (x: number): number => 0.5 * (1 + erf(x / Math.SQRT2));

export function softmax(logits: number[], temperature: number): number[] {
  const z = logits.map((v) => v / temperature);
  const max = Math.max(...z);
  const e = z.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/**
 * Second estimate: a percentile of the dense depth over tread pixels, mapped linearly; both chosen on the
 * calibration split (finalize.py tries 5, 10, 20, 30 and 50: every version since tread-2026.11.0 uses the median).
 */
export function denseEstimate(maps: MaskMaps, cal: Calibration): number | null {
  const values: number[] = [];
  for (let i = 0; i < maps.depth.length; i++) if (maps.treadProb[i]! > 0.5) values.push(maps.depth[i]!);
  if (values.length < cal.dense.minPixels) return null;
  values.sort((a, b) => a - b);
  // numpy's default (linear) percentile
  const pos = (cal.dense.percentile / 100) * (values.length - 1);
  const lo = Math.floor(pos);
  const q = values[lo]! + (values[Math.min(lo + 1, values.length - 1)]! - values[lo]!) * (pos - lo);
  return cal.dense.intercept + cal.dense.slope * q;
}

const round1 = (v: number): number => Math.round(v * 10) / 10;

/**
 * The stack's photo-size feature (since tread-2026.11.12): log2 of the upright upload's long side
 * over the reference (the size the networks were trained on), 0 at or below it and never above the
 * cap (the largest calibration photo's), as `preprocess.size_feature` in models/training. 0 for a
 * manifest without the term or an unknown size.
 */
export function photoSizeFeature(longSide: number | null, cal: Calibration): number {
  const spec = cal.photoSize;
  if (!spec || longSide === null || !(longSide > 0)) return 0;
  return Math.min(spec.cap, Math.max(0, Math.log2(longSide / spec.reference)));
}

/**
 * The synthetic chain's depth before any rounding or clamping: the linear stack of the regressor,
 * the dense estimate, the classifier's expected depth, the crop reading and the photo-size term.
 * No gate here: the scene reader (scene.ts) gates where the manifest has one.
 */
export function stackedEstimate(
  tread: TreadOutput,
  maps: MaskMaps,
  cal: Calibration,
  cropMm: number | null = null,
  photoLongSide: number | null = null,
): { dense: number | null; probs: number[]; stacked: number } {
  const dense = denseEstimate(maps, cal);
  const probs = softmax(tread.wearLogits, cal.wearTemperature);
  const expectedByVote = probs.reduce((s, p, i) => s + p * (cal.bandCentres[i] ?? 0), 0);
  const st = dense === null ? cal.stackWithoutDense : cal.stack;
  const stacked =
    st.intercept +
    st.regressor * tread.depthMm +
    st.dense * (dense ?? 0) +
    st.classifier * expectedByVote +
    st.crop * (cropMm ?? tread.depthMm) +
    st.size * photoSizeFeature(photoLongSide, cal);
  return { dense, probs, stacked };
}

export interface Combined {
  analysis: Omit<Analysis, 'modelVersion'>;
  regressorMm: number;
  denseMm: number | null;
  cropMm: number | null;
}

/** Share of the frame the segmenter sees as tread. */
export const treadShare = (maps: MaskMaps): number => maps.treadProb.reduce((n, p) => n + (p > 0.5 ? 1 : 0), 0) / maps.treadProb.length;

/**
 * `cropMm`: the regressor's reading of the tread crop (the analyzer's second look), or null when
 * there is none (no crop in the manifest, or too little tread for a box): the whole-frame reading
 * stands in for it, as in the calibration. `photoLongSide`: the upright upload's long side in
 * pixels, for the stack's photo-size term (null: unknown, the term is left out).
 */
export function combine(
  tread: TreadOutput,
  maps: MaskMaps,
  cal: Calibration,
  cropMm: number | null = null,
  photoLongSide: number | null = null,
  /** The maps wear bars are counted on: a long photo's own cells only (mask.onlyWhere); all by default. */
  twiMaps: MaskMaps = maps,
): Combined {
  // A network that answers NaN or an infinity must not pass for a photo without a tire (NaN fails
  // every comparison), nor be clamped into a confident "0.0 mm" below: every reading is checked here.
  if (!Number.isFinite(tread.gate) || !maps.treadProb.every(Number.isFinite)) {
    throw new AppError('MODEL_UNAVAILABLE', 'The models gave no usable tire / no-tire reading for this photo (not a number); the model files may be damaged.');
  }
  // depths and the sigma in millimetres: a reading no tire could give (beyond twice the deepest
  // tread, either side of 0) is a broken model, even where the stack would weigh it by 0
  const plausible = (mm: number) => Math.abs(mm) <= 2 * MAX_TREAD_DEPTH_MM;
  const depths = [tread.depthMm, ...(cropMm === null ? [] : [cropMm])];
  if (
    !depths.every(plausible) ||
    !(tread.sigmaMm > 0 && plausible(tread.sigmaMm)) ||
    tread.wearLogits.length !== WEAR_CLASSES.length ||
    !tread.wearLogits.every(Number.isFinite)
  ) {
    throw new AppError(
      'MODEL_UNAVAILABLE',
      `The models gave no usable depth reading for this photo (depth ${tread.depthMm}, sigma ${tread.sigmaMm}, crop ${cropMm}); the model files may be damaged.`,
    );
  }
  const share = treadShare(maps);
  // the tire / no-tire decision: the gate and the share of the frame segmented as tread
  if (!(tread.gate >= cal.gateThreshold) || share < cal.minTreadShare) {
    throw new AppError('NO_TIRE_DETECTED', 'No tire tread was found in the image. Photograph the tread face of the tire.');
  }
  const { dense, probs, stacked } = stackedEstimate(tread, maps, cal, cropMm, photoLongSide);
  // a bald tire may stack a little under 0 and reads 0; far under it no tire is, only a broken model
  const farBelowZero = stacked < -MAX_TREAD_DEPTH_MM;
  const raw = Math.max(0, stacked);
  const estimate = round1(raw);
  const half = cal.intervalK * tread.sigmaMm;
  const min = Math.min(estimate, Math.max(0, Math.floor((raw - half) * 10) / 10));
  const max = Math.max(estimate, Math.ceil((raw + half) * 10) / 10);
  const wear = wearForDepth(estimate);

  const pVote = voteFor(wear, probs, cal.voteMap);
  const sd = Math.max(half / Z80, 1e-3);
  const [bandLo, bandHi] = BAND_LIMITS[wear];
  const pDepth = normalCdf((bandHi - raw) / sd) - normalCdf((bandLo - raw) / sd);
  const mix = Math.min(1 - 1e-4, Math.max(1e-4, 0.5 * (pVote + pDepth)));
  const logit = Math.log(mix / (1 - mix));
  const confidence = 1 / (1 + Math.exp(-(cal.confidencePlatt.a * logit + cal.confidencePlatt.b)));

  const agreement = dense === null ? 0.5 : Math.max(0, 1 - Math.abs(tread.depthMm - dense) / FULL_DISAGREEMENT_MM);
  const modelAlignment = Math.round(100 * (0.7 * agreement + 0.3 * pVote));
  // A network that answers NaN or a manifest whose numbers load but make no sense must not become a
  // 200 with nulls (JSON has no NaN) or a depth no tire has: refuse, naming the models.
  if (![raw, half, confidence, modelAlignment].every(Number.isFinite) || farBelowZero || raw > MAX_TREAD_DEPTH_MM) {
    throw new AppError(
      'MODEL_UNAVAILABLE',
      `The models gave no usable reading for this photo (depth ${stacked}, interval half-width ${half}, confidence ${confidence}); the model files or their manifest may be damaged.`,
    );
  }

  const preliminaryReasons: PreliminaryReason[] = [
    ...(modelAlignment < 70 ? (['models_disagree'] as const) : []),
    ...(share < MIN_TREAD_SHARE ? (['tread_barely_visible'] as const) : []),
  ];
  return {
    regressorMm: tread.depthMm,
    denseMm: dense,
    cropMm,
    analysis: {
      wear,
      confidence: Math.round(confidence * 100) / 100,
      estimatedDepthMm: estimate,
      depthRangeMm: { min: round1(min), max: round1(max) },
      treadHealthIndex: treadHealthIndex(estimate),
      isPreliminary: preliminaryReasons.length > 0,
      preliminaryReasons,
      modelAlignment,
      twiConsensusCount: findTwiBars(twiMaps).filter((b) => b.confirmed).length,
      // the nearest whole 32nd inside the wear band, as the counter UI shows it (shared/units.ts)
      depth32nds: whole32nds(estimate),
    },
  };
}
