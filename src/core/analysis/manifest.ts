/**
 * models/manifest.json: what the app loads and how it turns network outputs into
 * a result. Written by models/training/finalize.py; checked here before any
 * session is created, so a missing or corrupt file is a clear MODEL_UNAVAILABLE
 * instead of a native crash mid-request.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { readCalibration } from './manifest-calibration.js';
import { entry, isRecord, list, num, positive, unavailable, type ModelEntry } from './manifest-fields.js';
import type { CropSpec } from './mask.js';
import type { SceneCalibration } from './scene.js';

export { isRecord, MAX_MODEL_BYTES, type ModelEntry } from './manifest-fields.js';

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

/** A side in pixels the networks read. */
function side(v: unknown, where: string): number {
  const n = num(v, where);
  if (!Number.isInteger(n) || n < 32 || n > 512) throw unavailable(`Model manifest: ${where} must be a whole number of pixels from 32 to 512.`);
  return n;
}

function trainedOn(v: unknown): string[] {
  const names = v === undefined ? [] : v;
  if (!Array.isArray(names) || !names.every((t) => typeof t === 'string' && /^[\w.-]{1,64}$/.test(t))) {
    throw unavailable('Model manifest: trainedOn must list data set names.');
  }
  return names as string[];
}

function models(m: Record<string, unknown>, size: number): Manifest['models'] {
  const cropModel = (v: unknown): CropModelEntry => {
    const given = isRecord(v) ? v.size : undefined;
    return { ...entry(v, 'crop'), size: given === undefined ? size : side(given, 'models.crop.size') };
  };
  return {
    tread: entry(m.tread, 'tread'),
    seg: entry(m.seg, 'seg'),
    ...(m.crop === undefined ? {} : { crop: cropModel(m.crop) }),
    ...(m.scene === undefined ? {} : { scene: entry(m.scene, 'scene') }),
  };
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
  // a scene model without its constants, or constants without the model, is a broken manifest
  if ((raw.models.scene === undefined) !== (raw.calibration.scene === undefined)) {
    throw unavailable('Model manifest: models.scene and calibration.scene must be given together.');
  }
  const input = raw.input;
  const size = side(input.size, 'input.size');
  return {
    version: raw.version,
    input: { size, mean: list(input.mean, 3, 'input.mean'), std: list(input.std, 3, 'input.std').map((x, i) => positive(x, `input.std[${i}]`)) },
    models: models(raw.models, size),
    trainedOn: trainedOn(raw.trainedOn),
    calibration: readCalibration(raw.calibration),
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
