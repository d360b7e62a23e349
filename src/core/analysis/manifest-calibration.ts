/**
 * models/manifest.json's `calibration` section, read and checked field by field (manifest.ts
 * loads the file; manifest-fields.ts has the readers). Ranges refuse constants that are finite
 * but would answer nonsense.
 */
import { MAX_TREAD_DEPTH_MM } from './analyzer.js';
import type { Calibration, PhotoSizeSpec, Stack } from './manifest.js';
import { fieldsOf, flag, list, num, positive, ranged, share, unavailable } from './manifest-fields.js';
import type { CropSpec } from './mask.js';
import type { SceneCalibration } from './scene.js';

function bandCentres(v: unknown): number[] {
  const centres = list(v, 5, 'calibration.bandCentres');
  // new … critical: a typical depth per class, deepest first, all within a tread's depths
  if (centres.some((d, i) => d < 0 || d > MAX_TREAD_DEPTH_MM || (i > 0 && d >= centres[i - 1]!))) {
    throw unavailable(`Model manifest: calibration.bandCentres must fall from new to critical, each from 0 to ${MAX_TREAD_DEPTH_MM} mm.`);
  }
  return centres;
}

function photoSize(v: unknown): PhotoSizeSpec {
  const o = fieldsOf(v);
  const spec = { reference: num(o.reference, 'calibration.photoSize.reference'), cap: num(o.cap, 'calibration.photoSize.cap') };
  if (!(spec.reference >= 1) || !(spec.cap >= 0) || spec.cap > 8) {
    throw unavailable('Model manifest: calibration.photoSize is out of range (reference at least 1 px, cap from 0 to 8).');
  }
  return spec;
}

function voteMap(v: unknown): { intercept: number; slope: number } {
  const o = fieldsOf(v);
  const map = { intercept: num(o.intercept, 'calibration.voteMap.intercept'), slope: num(o.slope, 'calibration.voteMap.slope') };
  if (!(map.slope > 0)) throw unavailable('Model manifest: calibration.voteMap.slope must be above 0.');
  return map;
}

/** `sized`: whether the manifest has calibration.photoSize, which a stack's size term needs. */
function stack(v: unknown, where: string, sized: boolean): Stack {
  const o = fieldsOf(v);
  // a size coefficient without the feature's constants (or the other way round) is a broken manifest
  if ((o.size !== undefined) !== sized) {
    throw unavailable(`Model manifest: ${where}.size and calibration.photoSize must be given together.`);
  }
  return {
    intercept: num(o.intercept, `${where}.intercept`),
    regressor: num(o.regressor, `${where}.regressor`),
    dense: num(o.dense, `${where}.dense`),
    classifier: num(o.classifier, `${where}.classifier`),
    crop: o.crop === undefined ? 0 : num(o.crop, `${where}.crop`),
    size: o.size === undefined ? 0 : num(o.size, `${where}.size`),
  };
}

function crop(v: unknown): CropSpec {
  const o = fieldsOf(v);
  const spec: CropSpec = {
    margin: num(o.margin, 'calibration.crop.margin'),
    maxAspect: num(o.maxAspect, 'calibration.crop.maxAspect'),
    lowPercentile: num(o.lowPercentile, 'calibration.crop.lowPercentile'),
    highPercentile: num(o.highPercentile, 'calibration.crop.highPercentile'),
    minCells: num(o.minCells, 'calibration.crop.minCells'),
    minSide: num(o.minSide, 'calibration.crop.minSide'),
  };
  const pct = (p: number) => p >= 0 && p <= 100;
  const inRange =
    spec.margin >= 0 &&
    spec.maxAspect >= 1 &&
    pct(spec.lowPercentile) &&
    pct(spec.highPercentile) &&
    spec.lowPercentile <= spec.highPercentile &&
    spec.minCells >= 1 &&
    spec.minSide >= 1;
  if (!inRange) throw unavailable('Model manifest: calibration.crop is out of range.');
  return spec;
}

function shopLine(v: unknown): NonNullable<SceneCalibration['shopLine']> {
  const o = fieldsOf(v);
  return {
    intercept: num(o.intercept, 'calibration.scene.shopLine.intercept'),
    slope: positive(o.slope, 'calibration.scene.shopLine.slope'),
    intervalScale: positive(o.intervalScale, 'calibration.scene.shopLine.intervalScale'),
  };
}

/** A number array of any length from 1 (the reader's length is the scene graph's feature count, checked at load). */
function numbers(v: unknown, where: string, ok: (n: number) => boolean, rule: string): number[] {
  if (!Array.isArray(v) || v.length === 0) throw unavailable(`Model manifest: ${where} must be a list of numbers.`);
  return v.map((x, i) => ranged(x, `${where}[${i}]`, ok, rule));
}

/** A shop's own reader (shop-reader.ts), written by a shop calibration. */
function shopReader(v: unknown): NonNullable<SceneCalibration['shopReader']> {
  const o = fieldsOf(v);
  const where = 'calibration.scene.shopReader';
  const finite = () => true;
  const reader = {
    mean: numbers(o.mean, `${where}.mean`, finite, 'finite'),
    scale: numbers(o.scale, `${where}.scale`, (n) => n > 0, 'above 0'),
    clip: positive(o.clip, `${where}.clip`),
    weights: numbers(o.weights, `${where}.weights`, finite, 'finite'),
    intercept: millimetres(o.intercept, `${where}.intercept`),
    halfWidthMm: ranged(o.halfWidthMm, `${where}.halfWidthMm`, (n) => n > 0 && n <= MAX_TREAD_DEPTH_MM, `above 0, at most ${MAX_TREAD_DEPTH_MM} mm`),
    lambda: positive(o.lambda, `${where}.lambda`),
    centre: numbers(o.centre, `${where}.centre`, finite, 'finite'),
    basis: Array.isArray(o.basis) ? o.basis.map((row, i) => numbers(row, `${where}.basis[${i}]`, finite, 'finite')) : [],
    typicalBelow: positive(o.typicalBelow, `${where}.typicalBelow`),
  };
  if (!Array.isArray(o.basis) || o.basis.length > 50) throw unavailable(`Model manifest: ${where}.basis must be a list of at most 50 directions.`);
  const d = reader.weights.length;
  if (reader.mean.length !== d || reader.scale.length !== d || reader.centre.length !== d || reader.basis.some((row) => row.length !== d)) {
    throw unavailable(`Model manifest: ${where}.mean, .scale, .centre, .weights and each .basis row must be as long as each other.`);
  }
  return reader;
}

const millimetres = (x: unknown, where: string): number => ranged(x, where, (n) => n >= 0 && n <= MAX_TREAD_DEPTH_MM, `from 0 to ${MAX_TREAD_DEPTH_MM} mm`);

function depthScale(v: unknown): SceneCalibration['depthScale'] {
  const o = fieldsOf(v);
  const at = (k: 'usableMm' | 'evenMm' | 'wornMm') => millimetres(o[k], `calibration.scene.depthScale.${k}`);
  const scale = { usableMm: at('usableMm'), evenMm: at('evenMm'), wornMm: at('wornMm') };
  // deeper for usable than for worn, or a likelier worn tire would read deeper
  if (!(scale.usableMm > scale.evenMm && scale.evenMm > scale.wornMm)) {
    throw unavailable('Model manifest: calibration.scene.depthScale must fall from usableMm through evenMm to wornMm.');
  }
  return scale;
}

function scene(v: unknown): SceneCalibration {
  const o = fieldsOf(v);
  const wp = fieldsOf(o.wornPlatt);
  return {
    noTire: share(o.noTire, 'calibration.scene.noTire'),
    notVisible: share(o.notVisible, 'calibration.scene.notVisible'),
    wornPlatt: { a: positive(wp.a, 'calibration.scene.wornPlatt.a'), b: num(wp.b, 'calibration.scene.wornPlatt.b') },
    depthScale: depthScale(o.depthScale),
    syntheticWeight: share(o.syntheticWeight, 'calibration.scene.syntheticWeight'),
    realSigmaMm: ranged(o.realSigmaMm, 'calibration.scene.realSigmaMm', (n) => n >= 0 && n <= MAX_TREAD_DEPTH_MM, `from 0 to ${MAX_TREAD_DEPTH_MM}`),
    twiMinTread: share(o.twiMinTread, 'calibration.scene.twiMinTread'),
    preliminaryBelow: share(o.preliminaryBelow, 'calibration.scene.preliminaryBelow'),
    ...(o.supportBelow === undefined ? {} : { supportBelow: share(o.supportBelow, 'calibration.scene.supportBelow') }),
    ...(o.shopLine === undefined ? {} : { shopLine: shopLine(o.shopLine) }),
    ...(o.shopReader === undefined ? {} : { shopReader: shopReader(o.shopReader) }),
  };
}

/** The whole calibration section (`c`, already known to be an object). */
export function readCalibration(c: Record<string, unknown>): Calibration {
  const dense = fieldsOf(c.dense);
  const platt = fieldsOf(c.confidencePlatt);
  const sized = c.photoSize !== undefined;
  return {
    gateThreshold: share(c.gateThreshold, 'calibration.gateThreshold'),
    minTreadShare: c.minTreadShare === undefined ? 0 : ranged(c.minTreadShare, 'calibration.minTreadShare', (n) => n >= 0 && n < 1, 'from 0 to under 1'),
    dense: {
      percentile: ranged(dense.percentile, 'calibration.dense.percentile', (n) => n >= 0 && n <= 100, 'from 0 to 100'),
      intercept: num(dense.intercept, 'calibration.dense.intercept'),
      slope: positive(dense.slope, 'calibration.dense.slope'),
      minPixels: ranged(dense.minPixels, 'calibration.dense.minPixels', (n) => Number.isInteger(n) && n >= 1, 'a whole number from 1'),
    },
    stack: stack(c.stack, 'calibration.stack', sized),
    stackWithoutDense: stack(c.stackWithoutDense, 'calibration.stackWithoutDense', sized),
    bandCentres: bandCentres(c.bandCentres),
    intervalK: positive(c.intervalK, 'calibration.intervalK'),
    wearTemperature: positive(c.wearTemperature, 'calibration.wearTemperature'),
    // a above 0: a more likely band is never made to look less likely
    confidencePlatt: { a: positive(platt.a, 'calibration.confidencePlatt.a'), b: num(platt.b, 'calibration.confidencePlatt.b') },
    ...(c.crop === undefined ? {} : { crop: crop(c.crop) }),
    ...(c.treadMirror === undefined ? {} : { treadMirror: flag(c.treadMirror, 'calibration.treadMirror') }),
    ...(sized ? { photoSize: photoSize(c.photoSize) } : {}),
    ...(c.voteMap === undefined ? {} : { voteMap: voteMap(c.voteMap) }),
    ...(c.scene === undefined ? {} : { scene: scene(c.scene) }),
  };
}
