/**
 * The scene reader (since tread-2026.11.28): a network taught on real photos that decides what the
 * photo shows — a tread to read, a tire whose tread cannot be read, or no tire — and reads how worn
 * the tire looks (models/README.md, "The scene reader"). Pure arithmetic here: the network's
 * outputs and the manifest's constants → the gate's outcome and the result fields.
 *
 * The earlier networks (regressor, segmenter, crop reader) were taught on renders only; on real
 * photos their gate refused what the renderer never drew and their depth was near chance. They
 * still give the overlays, the TWI geometry, and a second depth reading (the synthetic stack) that
 * is weighed in by `syntheticWeight` and whose agreement with the scene reader is `modelAlignment`.
 */
import { AppError } from '../errors.js';
import { whole32nds } from '../../shared/units.js';
import type { PreliminaryReason } from '../../shared/contract/analyze.js';
import { MAX_TREAD_DEPTH_MM, treadHealthIndex, wearForDepth, type Analysis, type SceneReading } from './analyzer.js';
import { BAND_LIMITS, FULL_DISAGREEMENT_MM, normalCdf, Z80 } from './combine.js';
import { readPhoto, type ShopReader } from './shop-reader.js';

/** What the scene network answers for one photo. */
export interface SceneOutput {
  /** Probabilities of tread, tread not visible, no tire (sum 1). */
  probs: [number, number, number];
  /** The network's probability that the tire is not usable (worn to under 3 mm). */
  worn: number;
  /**
   * The same as a logit, where the model gives it (`worn_logit`, since tread-2026.11.28.2): a float
   * probability is 1 exactly for every logit above ≈ 17, which ties the very photos whose order
   * matters (most of michelin-twi's close-ups); the logit keeps them apart. Absent: logit(worn).
   */
  wornLogit?: number;
  /**
   * The probability that the photo is like the photos the worn probability learned from (`support`,
   * since tread-2026.11.29.3; models/training/support_head.py): web photos of usable and worn tires
   * and close-ups of bald tread, against close-ups of tread and sidewalls whose wear no label gave.
   * Absent: 1 (full support).
   */
  support?: number;
  /**
   * The network's pooled features (`features`, since tread-2026.11.29.4): what a shop's own reader
   * reads (SceneCalibration.shopReader). Absent from older scene models.
   */
  features?: Float32Array;
  /** Its own depth output, mm: checked, not used (trained on real photos' side of 3 mm only, no scale). */
  depthMm: number;
  /** Its own sigma output, mm: checked, not used. */
  sigmaMm: number;
}

export interface SceneCalibration {
  /** Refuse as NO_TIRE_DETECTED at or above this probability of no tire. */
  noTire: number;
  /** Else refuse as TREAD_NOT_VISIBLE at or above this probability of an unreadable tread. */
  notVisible: number;
  /** Platt map of the worn probability's logit: P(not usable) = σ(a·logit + b), fitted on real photos out of fold. */
  wornPlatt: { a: number; b: number };
  /**
   * The millimetre scale of the worn probability (scene depth): P(worn) 0 → `usableMm`, 0.5 → `evenMm`
   * (the worn/usable line, 3.0 mm), 1 → `wornMm`, linear in between. The real labels say worn or
   * usable, not millimetres: the scale is a stated convention, its order is what michelin-twi measures.
   */
  depthScale: { usableMm: number; evenMm: number; wornMm: number };
  /** Share of the synthetic stack in the estimate (0: the scene reader alone). */
  syntheticWeight: number;
  /** The standard deviation of a real photo's depth around the estimate, mm (the 80 % interval and the confidence). */
  realSigmaMm: number;
  /** Wear bars count only on photos the scene reader is at least this sure show a tread. */
  twiMinTread: number;
  /** Below this probability of a tread the result is preliminary. */
  preliminaryBelow: number;
  /**
   * Below this support (SceneOutput.support) the photo is outside what the worn probability learned
   * from: the result is preliminary and its interval is the whole depth scale. Absent: never.
   */
  supportBelow?: number;
  /**
   * A shop's own calibration (shop-calibration.ts): gauge ≈ intercept + slope × estimate, the
   * interval's half-width times slope × intervalScale. Absent: the estimate as the models give it.
   */
  shopLine?: { intercept: number; slope: number; intervalScale: number };
  /**
   * A shop's own reader (shop-reader.ts; a shop calibration writes it where cross-validation on the
   * shop's gauge readings finds it reads them better): the depth from the network's features, its
   * 80 % interval the half-width its cross-validated readings held four in five. It replaces the
   * scene depth, the line and the support (it learned from the shop's photos); a photo unlike the
   * shop's photos is preliminary, with the whole scale as its interval.
   */
  shopReader?: ShopReader;
}

/** docs/API.md §2: worn and critical are the bands under 3.0 mm; "not usable" in the real labels. */
export const WORN_BELOW_MM = 3.0;
const clamp01 = (p: number): number => Math.min(1 - 1e-6, Math.max(1e-6, p));
const logit = (p: number): number => Math.log(clamp01(p) / (1 - clamp01(p)));
const round1 = (v: number): number => Math.round(v * 10) / 10;

/** A network answer that no photo can give (NaN, a probability outside 0..1) is a broken model, never a refusal. */
function checkOutput(out: SceneOutput): void {
  const probability = (p: number) => Number.isFinite(p) && p >= 0 && p <= 1;
  if (
    !out.probs.every(probability) ||
    Math.abs(out.probs[0] + out.probs[1] + out.probs[2] - 1) > 1e-3 ||
    !probability(out.worn) ||
    (out.wornLogit !== undefined && !Number.isFinite(out.wornLogit)) ||
    (out.support !== undefined && !probability(out.support)) ||
    // the network's own depth and sigma are not used (SceneOutput): only a number is asked of them
    !Number.isFinite(out.depthMm) ||
    !(out.sigmaMm > 0 && Number.isFinite(out.sigmaMm))
  ) {
    throw new AppError('MODEL_UNAVAILABLE', 'The scene model gave no usable reading for this photo; the model files may be damaged.');
  }
}

/** The gate's outcome: what `analyze` does with the photo. */
export function sceneOf(out: SceneOutput, cal: SceneCalibration): SceneReading {
  checkOutput(out);
  const [tread, treadNotVisible, noTire] = out.probs;
  const scene = noTire >= cal.noTire ? 'no_tire' : treadNotVisible >= cal.notVisible ? 'tread_not_visible' : 'tread';
  return { scene, probabilities: { tread, treadNotVisible, noTire } };
}

export const NO_TIRE_MESSAGE =
  'No tire was found in the photo. Photograph the tread of the tire: face-on, close (the tread filling the frame) and in good light.';
export const NOT_VISIBLE_MESSAGE =
  'A tire is in the photo, but its tread cannot be read (seen from the side, too far away, blurred or too dark). ' +
  'Photograph the tread face-on, from about 20–30 cm so that it fills the frame, in good light, and hold still.';

/** Throws the refusal the scene calls for; returns when there is a tread to read. */
export function refuseUnlessTread(reading: SceneReading): void {
  if (reading.scene === 'no_tire') throw new AppError('NO_TIRE_DETECTED', NO_TIRE_MESSAGE);
  if (reading.scene === 'tread_not_visible') throw new AppError('TREAD_NOT_VISIBLE', NOT_VISIBLE_MESSAGE);
}

/** P(not usable), calibrated on real photos: the Platt map of the network's logit. */
export function wornProbability(out: SceneOutput, cal: SceneCalibration): number {
  return 1 / (1 + Math.exp(-(cal.wornPlatt.a * (out.wornLogit ?? logit(out.worn)) + cal.wornPlatt.b)));
}

/** The worn probability on the millimetre scale (SceneCalibration.depthScale). */
export function sceneDepth(pWorn: number, cal: SceneCalibration): number {
  const { usableMm, evenMm, wornMm } = cal.depthScale;
  return pWorn <= 0.5 ? usableMm + (evenMm - usableMm) * (pWorn / 0.5) : evenMm + (wornMm - evenMm) * ((pWorn - 0.5) / 0.5);
}

/** What the result's fields are computed from (sceneResult). */
interface Reading {
  /** The estimate before rounding, mm. */
  raw: number;
  /** The Gaussian's standard deviation around it, mm (the interval and the confidence's band share). */
  sd: number;
  /** The probability that the tire is worn, as the confidence weighs it. */
  pWorn: number;
  /** The reading compared with the synthetic stack for modelAlignment (before the stack's share and a shop's line). */
  ownMm: number;
  /** Outside what the reading learned from: preliminary. */
  outside: boolean;
  /** The interval when it is the whole depth scale. */
  whole?: [number, number];
  /**
   * The synthetic stack as a second opinion (the shipped reading; not a shop's reader, see
   * sceneResult): as this reading reports it, and its share in the interval's mixture (1 − the
   * support). When given, a modelAlignment under 70 makes the result preliminary and the interval
   * that mixture's.
   */
  second?: { mm: number; weight: number };
}

/** The shipped reading: the calibrated worn probability on the millimetre scale, a shop's line, the support. */
function sceneReading(out: SceneOutput, syntheticMm: number, cal: SceneCalibration): Reading {
  const w = cal.syntheticWeight;
  const line = cal.shopLine ?? { intercept: 0, slope: 1, intervalScale: 1 };
  const pWorn = wornProbability(out, cal);
  const support = out.support ?? 1;
  const outside = cal.supportBelow !== undefined && support < cal.supportBelow;
  const sceneMm = sceneDepth(pWorn, cal);
  const reported = (mm: number) => Math.min(MAX_TREAD_DEPTH_MM, Math.max(0, line.intercept + line.slope * ((1 - w) * mm + w * syntheticMm)));
  return {
    raw: reported(sceneMm),
    sd: cal.realSigmaMm * line.slope * line.intervalScale,
    pWorn: support * pWorn + (1 - support) * 0.5,
    ownMm: sceneMm,
    // the support is how like the labelled photos this one is: where it is not, the stack (renders) may be the better depth
    second: { mm: reported(syntheticMm), weight: 1 - support },
    outside,
    ...(outside ? { whole: [reported(cal.depthScale.wornMm), reported(cal.depthScale.usableMm)] as [number, number] } : {}),
  };
}

/**
 * A shop's own reader: the depth from the features, the interval its cross-validated half-width,
 * the worn probability the Gaussian's share under 3 mm. The network's support does not apply: the
 * reader learned from the shop's own photos, and its cross-validation says how well it reads them.
 * A photo unlike those (its spread above the reader's typicalBelow) is outside what it learned
 * from, as a photo without support is for the shipped reading: preliminary, the whole depth scale
 * as its interval, and an even chance of either side for the confidence.
 */
function shopReading(out: SceneOutput, reader: ShopReader, cal: SceneCalibration): Reading {
  const features = out.features;
  if (!features || features.length !== reader.weights.length || !features.every(Number.isFinite)) {
    throw new AppError('MODEL_UNAVAILABLE', "The scene model gave no features for the shop's reader; the model files or their manifest may be damaged.");
  }
  const { depthMm: own, spread } = readPhoto(reader, features);
  const raw = Math.min(MAX_TREAD_DEPTH_MM, Math.max(0, own));
  const sd = reader.halfWidthMm / Z80;
  const outside = spread > reader.typicalBelow;
  return {
    raw,
    sd,
    pWorn: outside ? 0.5 : normalCdf((WORN_BELOW_MM - raw) / sd),
    ownMm: own,
    outside,
    ...(outside ? { whole: [cal.depthScale.wornMm, cal.depthScale.usableMm] as [number, number] } : {}),
  };
}

/**
 * The central 80 % of a mixture of two Gaussians of standard deviation `sd` around `a` and `b`,
 * `b` weighing `wb` (its 10th and 90th percentiles, by bisection): a ± 1.2816·sd when they coincide
 * or `b` weighs nothing; for an even mixture of readings far apart, each reading and 0.84·sd beyond.
 */
export function mixtureInterval(a: number, b: number, sd: number, wb = 0.5): [number, number] {
  const cdf = (x: number) => (1 - wb) * normalCdf((x - a) / sd) + wb * normalCdf((x - b) / sd);
  const quantile = (p: number) => {
    let lo = Math.min(a, b) - 4 * sd;
    let hi = Math.max(a, b) + 4 * sd;
    for (let i = 0; i < 50; i++) {
      const mid = (lo + hi) / 2;
      if (cdf(mid) < p) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  return [quantile(0.1), quantile(0.9)];
}

export interface SceneResultInput {
  scene: SceneOutput;
  /** The synthetic stack's estimate (combine.ts), mm, before rounding. */
  syntheticMm: number;
  /** Wear bars the TWI geometry confirmed (mask.ts findTwiBars). */
  confirmedBars: number;
}

/**
 * The result fields from the scene reader and the synthetic stack (docs/API.md §2):
 * - estimate: (1 − w)·scene depth + w·synthetic stack, w = syntheticWeight; the scene depth is the
 *   calibrated worn probability on the millimetre scale (sceneDepth);
 * - 80 % interval: estimate ± 1.2816·realSigmaMm; for a photo outside what the worn probability
 *   learned from (support under `supportBelow`), the whole depth scale (wornMm to usableMm); for
 *   readings that disagree (models_disagree), the central 80 % of a mixture of the estimate and the
 *   synthetic stack, each with that spread, the stack weighing 1 − the support (mixtureInterval):
 *   the less the photo is like the labelled ones, the more the renders' reading may be the depth;
 * - confidence (the probability that the band is right): the probability of the band's side of
 *   3.0 mm (worn or usable) times the Gaussian's share of that side that lies in the band; the side's
 *   probability is the calibrated worn probability where the photo is like the labelled ones and
 *   even (0.5) where it is not, mixed by the support: s·P(worn) + (1 − s)·0.5 (the estimate keeps
 *   the unmixed probability, so the order of the readings stays the network's);
 * - modelAlignment: 0.7 × the two readings' agreement (0 at 3 mm apart) + 0.3 × the side's probability;
 * - isPreliminary: alignment under 70, the scene reader less than `preliminaryBelow` sure of a tread,
 *   or the support under `supportBelow`; with a shop's own reader, the scene reader unsure of a tread
 *   or the photo unlike the shop's (the alignment is still given, but the renders-only stack it
 *   compares with reads real photos near chance: on michelin-twi as a shop it marked 56 % of the
 *   reader's results, whose error was 0.79 mm against 0.71 on the others; docs/CALIBRATION.md);
 * - preliminaryReasons: which of those made it preliminary (models_disagree, tread_barely_visible,
 *   unlike_training_photos for the support, unlike_shop_photos for a shop's reader), in that order;
 * - twiConsensusCount: confirmed bars only on a photo that is not preliminary and surely a tread.
 */
export function sceneResult(input: SceneResultInput, cal: SceneCalibration): Omit<Analysis, 'modelVersion'> {
  const { scene: out } = input;
  checkOutput(out);
  // the synthetic stack is checked as combine.ts checks it, whatever its weight: a stack no tire can
  // give (under −30 mm or over 30) is a broken manifest or model, not a reading to leave out
  if (!Number.isFinite(input.syntheticMm) || Math.abs(input.syntheticMm) > MAX_TREAD_DEPTH_MM) {
    throw new AppError(
      'MODEL_UNAVAILABLE',
      `The tread models gave no usable reading for this photo (synthetic stack ${input.syntheticMm} mm); the model files or their manifest may be damaged.`,
    );
  }
  const reading = cal.shopReader ? shopReading(out, cal.shopReader, cal) : sceneReading(out, input.syntheticMm, cal);
  const { raw, sd, outside } = reading;
  const half = Z80 * sd;
  const estimate = round1(raw);
  const wear = wearForDepth(estimate);
  const wornSide = estimate < WORN_BELOW_MM;
  const pSide = wornSide ? reading.pWorn : 1 - reading.pWorn;
  const [lo, hi] = BAND_LIMITS[wear];
  const mass = (a: number, b: number) => normalCdf((b - raw) / sd) - normalCdf((a - raw) / sd);
  const sideMass = wornSide ? mass(-Infinity, WORN_BELOW_MM) : mass(WORN_BELOW_MM, Infinity);
  const inBand = sideMass > 1e-9 ? mass(Math.max(lo, wornSide ? -Infinity : WORN_BELOW_MM), Math.min(hi, wornSide ? WORN_BELOW_MM : Infinity)) / sideMass : 0;
  const confidence = Math.min(1, Math.max(0, pSide * inBand));
  const agreement = Math.max(0, 1 - Math.abs(reading.ownMm - input.syntheticMm) / FULL_DISAGREEMENT_MM);
  const modelAlignment = Math.round(100 * (0.7 * agreement + 0.3 * pSide));
  const preliminaryReasons: PreliminaryReason[] = [
    ...(reading.second && modelAlignment < 70 ? (['models_disagree'] as const) : []),
    ...(out.probs[0] < cal.preliminaryBelow ? (['tread_barely_visible'] as const) : []),
    ...(outside ? ([cal.shopReader ? 'unlike_shop_photos' : 'unlike_training_photos'] as const) : []),
  ];
  const isPreliminary = preliminaryReasons.length > 0;
  // readings that disagree: the interval is the 80 % of their mixture, the stack weighing 1 − the support
  const second = preliminaryReasons.includes('models_disagree') ? reading.second : undefined;
  const [low, high] = reading.whole ?? (second ? mixtureInterval(raw, second.mm, sd, second.weight) : [raw - half, raw + half]);
  const min = Math.min(estimate, Math.max(0, Math.floor(low * 10) / 10));
  const max = Math.max(estimate, Math.ceil(high * 10) / 10);
  const surelyTread = !isPreliminary && out.probs[0] >= cal.twiMinTread;
  if (![raw, half, confidence, modelAlignment].every(Number.isFinite)) {
    throw new AppError('MODEL_UNAVAILABLE', 'The models gave no usable reading for this photo; the model files or their manifest may be damaged.');
  }
  return {
    wear,
    confidence: Math.round(confidence * 100) / 100,
    estimatedDepthMm: estimate,
    depthRangeMm: { min: round1(min), max: round1(max) },
    treadHealthIndex: treadHealthIndex(estimate),
    isPreliminary,
    preliminaryReasons,
    modelAlignment,
    twiConsensusCount: surelyTread ? input.confirmedBars : 0,
    depth32nds: whole32nds(estimate),
  };
}
