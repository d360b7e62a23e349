/**
 * models/manifest.json: what the app loads and how it turns network outputs into
 * a result. Written by models/training/finalize.py; checked here before any
 * session is created, so a missing or corrupt file is a clear MODEL_UNAVAILABLE
 * instead of a native crash mid-request.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.js';
import { MAX_TREAD_DEPTH_MM } from './analyzer.js';
import type { CropSpec } from './mask.js';
import type { SceneCalibration } from './scene.js';

/** The largest model file a manifest may name (the shipped three are 0.6–4.3 MB). */
export const MAX_MODEL_BYTES = 256 * 1024 * 1024;

export interface ModelEntry {
  file: string;
  sha256: string;
  bytes: number;
}

export interface Stack {
  intercept: number;
  regressor: number;
  dense: number;
  classifier: number;
  /** The regressor's reading of the tread crop (0 in manifests before tread-2026.11.9). */
  crop: number;
  /** The photo-size term (`photoSizeFeature`; 0 in manifests without `calibration.photoSize`). */
  size: number;
}

/** The photo-size feature's constants: min(cap, max(0, log2(long side / reference))). */
export interface PhotoSizeSpec {
  /** The long side, in pixels, the term is zero at and below (the networks' training photos). */
  reference: number;
  /** The largest value the feature takes: the largest calibration photo's (no extrapolation). */
  cap: number;
}

export interface Calibration {
  gateThreshold: number;
  /** Share of the frame the segmenter must see as tread for the image to count as a tire photo. */
  minTreadShare: number;
  dense: { percentile: number; intercept: number; slope: number; minPixels: number };
  /** estimate = intercept + regressor·dA + dense·dB + classifier·E[depth | wear vote] (least squares on validation). */
  stack: Stack;
  /** The same without the dense estimate, for frames where the segmenter finds too little tread. */
  stackWithoutDense: Stack;
  /** A typical depth per wear class (new … critical), for the classifier's expected depth. */
  bandCentres: number[];
  intervalK: number;
  wearTemperature: number;
  confidencePlatt: { a: number; b: number };
  /**
   * A shop calibration's depth line (gauge = intercept + slope × estimate) applied to the wear
   * classifier's vote too, so that the vote speaks of the same depths as the corrected estimate
   * (combine.ts, voteFor). Absent: the vote as the networks give it.
   */
  voteMap?: { intercept: number; slope: number };
  /** Where the regressor takes its second look; absent: no second look (manifests before tread-2026.11.9). */
  crop?: CropSpec;
  /**
   * The app averages the regressor over the photo and its mirror image (since tread-2026.11.9, whose
   * graph no longer does it inside, so that the crop can share the batch unmirrored).
   */
  treadMirror?: boolean;
  /**
   * The photo-size term of the stacks (since tread-2026.11.12): larger photos read shallower, so the
   * stack adds `size · feature` of the upright upload's long side. Absent: no such term.
   */
  photoSize?: PhotoSizeSpec;
  /**
   * The scene reader's constants (since tread-2026.11.28; models.scene): its gate thresholds and how
   * its readings make the result (scene.ts). Absent: the renders-only gate and stack decide.
   */
  scene?: SceneCalibration;
}

/** The crop reader: its side (the crop is stretched to size x size; input.size in manifests before `size`). */
export interface CropModelEntry extends ModelEntry {
  size: number;
}

export interface Manifest {
  version: string;
  input: { size: number; mean: number[]; std: number[] };
  /** `crop`: the regressor trained on tread crops that reads the second look (absent: the tread network reads it). */
  models: { tread: ModelEntry; seg: ModelEntry; crop?: CropModelEntry; scene?: ModelEntry };
  calibration: Calibration;
  /** The data sets the shipped weights learned from (names as in ../shared/realdata, plus `renders`). */
  trainedOn: string[];
}

function unavailable(message: string, cause?: unknown): AppError {
  return new AppError('MODEL_UNAVAILABLE', message, cause === undefined ? {} : { cause });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flag(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw unavailable(`Model manifest: ${where} must be true or false.`);
  return value;
}

function num(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw unavailable(`Model manifest: ${where} must be a number.`);
  return value;
}

function entry(value: unknown, name: string): ModelEntry {
  if (!isRecord(value) || typeof value.file !== 'string' || typeof value.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(value.sha256)) {
    throw unavailable(`Model manifest: models.${name} needs file and a sha256 hex digest.`);
  }
  if (value.file.includes('/') || value.file.includes('\\')) throw unavailable(`Model manifest: models.${name}.file must be a plain file name.`);
  const bytes = num(value.bytes, `models.${name}.bytes`);
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_MODEL_BYTES) {
    throw unavailable(`Model manifest: models.${name}.bytes must be the file's size, a whole number of bytes from 1 to ${MAX_MODEL_BYTES}.`);
  }
  return { file: value.file, sha256: value.sha256, bytes };
}

/** Parses and validates manifest.json in `modelsDir`; does not touch the model files. */
export async function loadManifest(modelsDir: string): Promise<Manifest> {
  const file = path.join(modelsDir, 'manifest.json');
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw unavailable(`Model manifest ${file} is missing or not valid JSON.`, error);
  }
  if (!isRecord(raw) || typeof raw.version !== 'string' || !isRecord(raw.models) || !isRecord(raw.calibration) || !isRecord(raw.input)) {
    throw unavailable(`Model manifest ${file} lacks version, input, models or calibration.`);
  }
  if (!/^\S{1,100}$/.test(raw.version)) throw unavailable(`Model manifest ${file}: version must be 1 to 100 characters without spaces.`);
  const c = raw.calibration;
  const dense = isRecord(c.dense) ? c.dense : {};
  const platt = isRecord(c.confidencePlatt) ? c.confidencePlatt : {};
  const input = raw.input;
  const list = (v: unknown, length: number, where: string): number[] => {
    if (!Array.isArray(v) || v.length !== length) throw unavailable(`Model manifest: ${where} must list ${length} numbers.`);
    return v.map((x, i) => num(x, `${where}[${i}]`));
  };
  const vector = (v: unknown, where: string): number[] => list(v, 3, where);
  /** A number that also passes `ok` (finite numbers that make no sense would load and answer nonsense). */
  const ranged = (v: unknown, where: string, ok: (n: number) => boolean, rule: string): number => {
    const n = num(v, where);
    if (!ok(n)) throw unavailable(`Model manifest: ${where} must be ${rule} (it is ${n}).`);
    return n;
  };
  const positive = (v: unknown, where: string): number => ranged(v, where, (n) => n > 0, 'above 0');
  const share = (v: unknown, where: string): number => ranged(v, where, (n) => n >= 0 && n <= 1, 'from 0 to 1');
  const bandCentres = (v: unknown): number[] => {
    const centres = list(v, 5, 'calibration.bandCentres');
    // new … critical: a typical depth per class, deepest first, all within a tread's depths
    if (centres.some((d, i) => d < 0 || d > MAX_TREAD_DEPTH_MM || (i > 0 && d >= centres[i - 1]!))) {
      throw unavailable(`Model manifest: calibration.bandCentres must fall from new to critical, each from 0 to ${MAX_TREAD_DEPTH_MM} mm.`);
    }
    return centres;
  };
  const photoSize = (v: unknown): PhotoSizeSpec => {
    const o = isRecord(v) ? v : {};
    const spec = { reference: num(o.reference, 'calibration.photoSize.reference'), cap: num(o.cap, 'calibration.photoSize.cap') };
    if (!(spec.reference >= 1) || !(spec.cap >= 0) || spec.cap > 8) {
      throw unavailable('Model manifest: calibration.photoSize is out of range (reference at least 1 px, cap from 0 to 8).');
    }
    return spec;
  };
  const voteMap = (v: unknown): { intercept: number; slope: number } => {
    const o = isRecord(v) ? v : {};
    const map = { intercept: num(o.intercept, 'calibration.voteMap.intercept'), slope: num(o.slope, 'calibration.voteMap.slope') };
    if (!(map.slope > 0)) throw unavailable('Model manifest: calibration.voteMap.slope must be above 0.');
    return map;
  };
  const sized = c.photoSize !== undefined;
  const stack = (v: unknown, where: string): Stack => {
    const o = isRecord(v) ? v : {};
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
  };
  const crop = (v: unknown): CropSpec | undefined => {
    if (v === undefined) return undefined;
    const o = isRecord(v) ? v : {};
    const spec: CropSpec = {
      margin: num(o.margin, 'calibration.crop.margin'),
      maxAspect: num(o.maxAspect, 'calibration.crop.maxAspect'),
      lowPercentile: num(o.lowPercentile, 'calibration.crop.lowPercentile'),
      highPercentile: num(o.highPercentile, 'calibration.crop.highPercentile'),
      minCells: num(o.minCells, 'calibration.crop.minCells'),
      minSide: num(o.minSide, 'calibration.crop.minSide'),
    };
    const pct = (p: number) => p >= 0 && p <= 100;
    if (
      spec.margin < 0 ||
      spec.maxAspect < 1 ||
      !pct(spec.lowPercentile) ||
      !pct(spec.highPercentile) ||
      spec.lowPercentile > spec.highPercentile ||
      spec.minCells < 1 ||
      spec.minSide < 1
    ) {
      throw unavailable('Model manifest: calibration.crop is out of range.');
    }
    return spec;
  };
  const shopLine = (v: unknown): { intercept: number; slope: number; intervalScale: number } => {
    const o = isRecord(v) ? v : {};
    return {
      intercept: num(o.intercept, 'calibration.scene.shopLine.intercept'),
      slope: positive(o.slope, 'calibration.scene.shopLine.slope'),
      intervalScale: positive(o.intervalScale, 'calibration.scene.shopLine.intervalScale'),
    };
  };
  const depthScale = (v: unknown): SceneCalibration['depthScale'] => {
    const o = isRecord(v) ? v : {};
    const mm = (x: unknown, k: string) =>
      ranged(x, `calibration.scene.depthScale.${k}`, (n) => n >= 0 && n <= MAX_TREAD_DEPTH_MM, `from 0 to ${MAX_TREAD_DEPTH_MM} mm`);
    const scale = { usableMm: mm(o.usableMm, 'usableMm'), evenMm: mm(o.evenMm, 'evenMm'), wornMm: mm(o.wornMm, 'wornMm') };
    // deeper for usable than for worn, or a likelier worn tire would read deeper
    if (!(scale.usableMm > scale.evenMm && scale.evenMm > scale.wornMm)) {
      throw unavailable('Model manifest: calibration.scene.depthScale must fall from usableMm through evenMm to wornMm.');
    }
    return scale;
  };
  const scene = (v: unknown): SceneCalibration => {
    const o = isRecord(v) ? v : {};
    const wp = isRecord(o.wornPlatt) ? o.wornPlatt : {};
    return {
      noTire: share(o.noTire, 'calibration.scene.noTire'),
      notVisible: share(o.notVisible, 'calibration.scene.notVisible'),
      wornPlatt: { a: positive(wp.a, 'calibration.scene.wornPlatt.a'), b: num(wp.b, 'calibration.scene.wornPlatt.b') },
      depthScale: depthScale(o.depthScale),
      syntheticWeight: share(o.syntheticWeight, 'calibration.scene.syntheticWeight'),
      realSigmaMm: ranged(o.realSigmaMm, 'calibration.scene.realSigmaMm', (n) => n >= 0 && n <= MAX_TREAD_DEPTH_MM, `from 0 to ${MAX_TREAD_DEPTH_MM}`),
      twiMinTread: share(o.twiMinTread, 'calibration.scene.twiMinTread'),
      preliminaryBelow: share(o.preliminaryBelow, 'calibration.scene.preliminaryBelow'),
      ...(o.shopLine === undefined ? {} : { shopLine: shopLine(o.shopLine) }),
    };
  };
  // a scene model without its constants, or constants without the model, is a broken manifest
  if ((raw.models.scene === undefined) !== (c.scene === undefined)) {
    throw unavailable('Model manifest: models.scene and calibration.scene must be given together.');
  }
  const trainedOn = raw.trainedOn === undefined ? [] : raw.trainedOn;
  if (!Array.isArray(trainedOn) || !trainedOn.every((t) => typeof t === 'string' && /^[\w.-]{1,64}$/.test(t))) {
    throw unavailable('Model manifest: trainedOn must list data set names.');
  }
  const side = (v: unknown, where: string): number => {
    const n = num(v, where);
    if (!Number.isInteger(n) || n < 32 || n > 512) throw unavailable(`Model manifest: ${where} must be a whole number of pixels from 32 to 512.`);
    return n;
  };
  const size = side(input.size, 'input.size');
  const cropModel = (v: unknown): CropModelEntry => {
    const e = entry(v, 'crop');
    const given = isRecord(v) ? v.size : undefined;
    return { ...e, size: given === undefined ? size : side(given, 'models.crop.size') };
  };
  return {
    version: raw.version,
    input: { size, mean: vector(input.mean, 'input.mean'), std: vector(input.std, 'input.std').map((x, i) => positive(x, `input.std[${i}]`)) },
    models: {
      tread: entry(raw.models.tread, 'tread'),
      seg: entry(raw.models.seg, 'seg'),
      ...(raw.models.crop === undefined ? {} : { crop: cropModel(raw.models.crop) }),
      ...(raw.models.scene === undefined ? {} : { scene: entry(raw.models.scene, 'scene') }),
    },
    trainedOn: trainedOn as string[],
    calibration: {
      gateThreshold: share(c.gateThreshold, 'calibration.gateThreshold'),
      minTreadShare: c.minTreadShare === undefined ? 0 : ranged(c.minTreadShare, 'calibration.minTreadShare', (n) => n >= 0 && n < 1, 'from 0 to under 1'),
      dense: {
        percentile: ranged(dense.percentile, 'calibration.dense.percentile', (n) => n >= 0 && n <= 100, 'from 0 to 100'),
        intercept: num(dense.intercept, 'calibration.dense.intercept'),
        slope: positive(dense.slope, 'calibration.dense.slope'),
        minPixels: ranged(dense.minPixels, 'calibration.dense.minPixels', (n) => Number.isInteger(n) && n >= 1, 'a whole number from 1'),
      },
      stack: stack(c.stack, 'calibration.stack'),
      stackWithoutDense: stack(c.stackWithoutDense, 'calibration.stackWithoutDense'),
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
    },
  };
}

/**
 * Checks every model file's size, then reads it and checks its sha256; returns the bytes so they
 * are read once. A file of the wrong size is refused before it is read (a stray multi-gigabyte
 * file in its place is never loaded into memory).
 */
export async function readVerifiedModels(modelsDir: string, manifest: Manifest): Promise<{ tread: Buffer; seg: Buffer; crop?: Buffer; scene?: Buffer }> {
  const read = async (e: ModelEntry): Promise<Buffer> => {
    const file = path.join(modelsDir, e.file);
    const info = await stat(file).catch((error: unknown) => {
      throw unavailable(`Model file ${file} is missing.`, error);
    });
    if (!info.isFile()) throw unavailable(`Model file ${file} is missing (not a file).`);
    if (info.size !== e.bytes) {
      throw unavailable(`Model file ${file} is corrupt: ${info.size} bytes where the manifest says ${e.bytes}.`);
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      throw unavailable(`Model file ${file} is missing.`, error);
    }
    const digest = createHash('sha256').update(bytes).digest('hex');
    if (digest !== e.sha256) {
      throw unavailable(`Model file ${file} is corrupt: sha256 ${digest} does not match the manifest (${e.sha256}).`);
    }
    return bytes;
  };
  const { crop, scene } = manifest.models;
  const [tread, seg, cropBytes, sceneBytes] = await Promise.all([
    read(manifest.models.tread),
    read(manifest.models.seg),
    crop ? read(crop) : undefined,
    scene ? read(scene) : undefined,
  ]);
  return { tread, seg, ...(cropBytes ? { crop: cropBytes } : {}), ...(sceneBytes ? { scene: sceneBytes } : {}) };
}
