/** A shop's own reader: the ridge fit on the scene network's features, its cross-validated decision, and the manifest it is written to. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { random } from '../../src/core/analysis/eval-metrics.js';
import { readCalibration } from '../../src/core/analysis/manifest-calibration.js';
import { sceneResult, type SceneCalibration, type SceneOutput } from '../../src/core/analysis/scene.js';
import {
  calibratedManifest,
  FEW_WORN_READINGS,
  fitShopCalibrationWithReader,
  formatFit,
  MIN_READER_TIRES,
  pointFrom,
  type ShopPoint,
} from '../../src/core/analysis/shop-calibration.js';
import { MODELS_DIR, SCENE_CAL } from './helpers.js';
import { blockOf, CLIP, fitReader, readDepth, readPhoto, ridgeSolve, type ShopReader } from '../../src/core/analysis/shop-reader.js';

/**
 * n photos whose features hold the depth: feature 0 is the depth plus noise, features 1–2 its square
 * root and a shifted copy, the rest noise. The shipped estimate says nothing (always 1.1 mm, as the
 * shipped model reads a close-up), with a whole-scale interval.
 */
function shop(n: number, options: { d?: number; noise?: number; signal?: boolean; seed?: number } = {}): ShopPoint[] {
  const r = random(options.seed ?? 3);
  const d = options.d ?? 40;
  const noise = options.noise ?? 0.3;
  return Array.from({ length: n }, () => {
    const gauge = Math.round((1 + 7 * r()) * 10) / 10;
    const f = new Float32Array(d);
    for (let j = 0; j < d; j++) f[j] = 2 * r() - 1;
    if (options.signal !== false) {
      f[0] = gauge + noise * (2 * r() - 1);
      f[1] = Math.sqrt(gauge) + 0.1 * (2 * r() - 1);
      f[2] = 10 - gauge + noise * (2 * r() - 1);
    }
    return pointFrom(gauge, { estimatedDepthMm: 1.1, depthRangeMm: { min: 0.8, max: 8 }, isPreliminary: true }, f);
  });
}

/** A reader of two standardised features (mean 0, scale 1, no main directions). */
const twoFeatures = (r: Pick<ShopReader, 'weights' | 'intercept' | 'halfWidthMm' | 'typicalBelow'>): ShopReader => ({
  mean: [0, 0],
  scale: [1, 1],
  clip: CLIP,
  lambda: 1,
  centre: [0, 0],
  basis: [],
  ...r,
});

describe('the ridge solve', () => {
  it('solves (A + λI) x = b for a symmetric positive definite A, and refuses one that is not', async () => {
    const a = Float64Array.from([4, 1, 0, 1, 3, 1, 0, 1, 2]);
    const b = Float64Array.from([1, 2, 3]);
    const x = await ridgeSolve(a, 3, 0.5, b);
    // (A + 0.5 I) x = b, checked by multiplying back
    for (let i = 0; i < 3; i++) {
      const row = [0, 1, 2].reduce((s, j) => s + (a[i * 3 + j]! + (i === j ? 0.5 : 0)) * x[j]!, 0);
      expect(row).toBeCloseTo(b[i]!, 10);
    }
    await expect(ridgeSolve(Float64Array.from([-1, 0, 0, -1]), 2, 0, Float64Array.from([1, 1]))).rejects.toThrow(/positive definite/);
  });

  it('keeps photos taken one after another in one fold', () => {
    expect(Array.from({ length: 10 }, (_, i) => blockOf(i, 10, 5))).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
  });
});

describe('fitting a reader', () => {
  it('reads the depth the features hold, on photos it was not fitted on', async () => {
    const points = shop(200);
    const { reader, crossValidated, covered } = await fitReader(
      points.map((p) => p.features!),
      points.map((p) => p.gaugeMm),
      5,
    );
    const mae = crossValidated.reduce((s, v, i) => s + Math.abs(v - points[i]!.gaugeMm), 0) / points.length;
    expect(mae).toBeLessThan(0.6);
    expect(reader.weights).toHaveLength(40);
    expect(reader.halfWidthMm).toBeGreaterThan(0.1);
    expect(reader.halfWidthMm).toBeLessThan(1.2);
    // the interval of the other folds holds about four readings in five
    const coverage = covered.filter(Boolean).length / covered.length;
    expect(coverage).toBeGreaterThan(0.7);
    expect(coverage).toBeLessThan(0.9);
    // new photos like them: read within 2 mm, and as typical as the photos it learned from
    const like = shop(200, { seed: 99 });
    for (const p of like.slice(0, 20)) expect(Math.abs(readDepth(reader, p.features!) - p.gaugeMm)).toBeLessThan(2);
    const unusual = (ps: ShopPoint[]) => ps.filter((p) => readPhoto(reader, p.features!).spread > reader.typicalBelow).length / ps.length;
    expect(unusual(points)).toBeCloseTo(0.01, 2);
    // (a few more than 1 in 100 new photos: the main directions were found on the photos themselves,
    // which lie nearer them; 40 noise features and 200 photos exaggerate it, michelin-twi gives 2.1 %)
    expect(unusual(like)).toBeLessThan(0.15);
    // photos of another kind (every feature shifted by two of the shop's standard deviations): all unusual
    const other = like.map((p) => ({ ...p, features: p.features!.map((v, j) => v + 2 * reader.scale[j]!) }));
    expect(unusual(other)).toBe(1);
  });

  it('holds a photo far outside the shop’s photos within ±clip standard deviations, and refuses features of another length', () => {
    const reader = twoFeatures({ weights: [1, 0.5], intercept: 4, halfWidthMm: 1, typicalBelow: 2 });
    expect(readDepth(reader, [1, 2])).toBe(6);
    expect(readPhoto(reader, [1, 2]).spread).toBe((1 + 4) / 2);
    expect(readPhoto(reader, [1000, -1000])).toEqual({ depthMm: 4 + CLIP - 0.5 * CLIP, spread: CLIP ** 2 });
    expect(() => readDepth(reader, [1, 2, 3])).toThrow(RangeError);
  });

  it('refuses too few photos, readings of another count and features of uneven length', async () => {
    await expect(fitReader([new Float32Array(3)], [1], 5)).rejects.toThrow(RangeError);
    const five = Array.from({ length: 12 }, () => new Float32Array(3));
    await expect(fitReader(five, [1, 2], 5)).rejects.toThrow(RangeError);
    await expect(fitReader([...five.slice(1), new Float32Array(4)], new Array(12).fill(3), 5)).rejects.toThrow(/same number/);
  });

  it('fits photos that are all alike, or readings that are all the same, to a reader the manifest takes', async () => {
    const shipped = JSON.parse(readFileSync(path.join(MODELS_DIR, 'manifest.json'), 'utf8')).calibration;
    const loads = (reader: ShopReader) => readCalibration({ ...shipped, scene: { ...shipped.scene, shopReader: reader } }).scene?.shopReader;
    const alike = await fitReader(
      Array.from({ length: 20 }, () => Float32Array.from([1, 2, 3])),
      Array.from({ length: 20 }, (_, i) => 2 + (i % 5)),
      5,
    );
    expect(alike.reader.basis).toEqual([]);
    expect(readDepth(alike.reader, [1, 2, 3])).toBeCloseTo(4, 6);
    expect(loads(alike.reader)).toEqual(alike.reader);
    const same = await fitReader(
      shop(20).map((p) => p.features!),
      new Array(20).fill(5),
      5,
    );
    expect(same.crossValidated.every((v) => Math.abs(v - 5) < 1e-9)).toBe(true);
    expect(loads(same.reader)).toEqual(same.reader);
  });

  it('is deterministic', async () => {
    const points = shop(80);
    const fit = () =>
      fitReader(
        points.map((p) => p.features!),
        points.map((p) => p.gaugeMm),
        5,
      );
    expect((await fit()).reader).toEqual((await fit()).reader);
  });
});

describe('deciding on a reader', () => {
  it('keeps a reader that reads the shop’s photos better than the line, in the line’s place', async () => {
    const fit = await fitShopCalibrationWithReader(shop(120));
    expect(fit.readerApplied).toBe(true);
    expect(fit.reader?.weights).toHaveLength(40);
    expect(fit.correction).toEqual({ intercept: 0, slope: 1, intervalScale: 1 });
    expect(fit.after.mae).toBeLessThan(fit.before.mae - 1);
    expect(fit.reasons[0]).toMatch(/reader of the shop's own/);
    expect(formatFit(fit)).toMatch(/with the shop's reader/);
  });

  it('says so when the readings hold few worn tires', async () => {
    expect((await fitShopCalibrationWithReader(shop(120))).reasons.join('\n')).not.toMatch(/few worn tires/);
    const deepOnly = shop(200).filter((p) => p.gaugeMm >= 3 || p.gaugeMm < 1.2);
    expect(deepOnly.filter((p) => p.gaugeMm < 3).length).toBeLessThan(FEW_WORN_READINGS);
    const fit = await fitShopCalibrationWithReader(deepOnly);
    expect(fit.readerApplied).toBe(true);
    expect(fit.reasons[1]).toMatch(/^only \d+ of the readings are under 3\.0 mm: the reader has seen few worn tires/);
  });

  it('keeps none where the features say nothing of the depth', async () => {
    const fit = await fitShopCalibrationWithReader(shop(120, { signal: false }));
    expect(fit.readerApplied).toBe(false);
    expect(fit.reader).toBeUndefined();
    expect(fit.reasons.at(-1)).toMatch(/no reader of the shop's own: its cross-validated error/);
  });

  it('fits none on too few photos, or on photos read without features (models before tread-2026.11.29.4)', async () => {
    const few = await fitShopCalibrationWithReader(shop(MIN_READER_TIRES - 1));
    expect(few.readerApplied).toBe(false);
    expect(few.reasons.at(-1)).toMatch(new RegExp(`at least ${MIN_READER_TIRES} photos`));
    const without = await fitShopCalibrationWithReader(shop(120).map(({ features: _f, ...p }) => p));
    expect(without.readerApplied).toBe(false);
    expect(without.reasons.at(-1)).toMatch(/give no features/);
  });
});

const sceneCal: SceneCalibration = { ...SCENE_CAL, supportBelow: 0.5 };

describe('a reader in the manifest and in the result', () => {
  it('is written into the scene constants, read back and checked', async () => {
    const fit = await fitShopCalibrationWithReader(shop(120));
    const base = { version: 'tread-x', calibration: { stack: { intercept: 0 }, stackWithoutDense: { intercept: 0 }, intervalK: 1, scene: sceneCal } };
    const made = calibratedManifest(base, fit, { created: new Date('2026-11-29T08:00:00Z'), labelsSha256: null }) as any;
    expect(made.calibration.scene.shopReader.weights).toHaveLength(40);
    expect(made.shopCalibration.reader).toEqual({ halfWidthMm: fit.reader!.halfWidthMm, lambda: fit.reader!.lambda, features: 40 });
    // through JSON, as the file is
    const { shopReader } = JSON.parse(JSON.stringify(made.calibration.scene));
    const shipped = JSON.parse(readFileSync(path.join(MODELS_DIR, 'manifest.json'), 'utf8')).calibration;
    const read = (reader: unknown) => readCalibration({ ...shipped, scene: { ...shipped.scene, shopReader: reader } }).scene?.shopReader;
    expect(read(shopReader)).toEqual(fit.reader);
    for (const [field, edit] of [
      ['shopReader.weights', (r: any) => (r.weights = 'many')],
      ['shopReader.scale[3]', (r: any) => (r.scale[3] = 0)],
      ['shopReader.mean[0]', (r: any) => (r.mean[0] = null)],
      ['as long as each other', (r: any) => r.weights.pop()],
      ['shopReader.halfWidthMm', (r: any) => (r.halfWidthMm = 0)],
      ['shopReader.intercept', (r: any) => (r.intercept = -2)],
      ['shopReader.typicalBelow', (r: any) => delete r.typicalBelow],
    ] as const) {
      const bad = structuredClone(shopReader);
      edit(bad);
      expect(() => read(bad), field).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining(field) }));
    }
    // a manifest without a scene reader cannot carry one
    expect(() =>
      calibratedManifest({ ...base, calibration: { ...base.calibration, scene: undefined } }, fit, { created: new Date(), labelsSha256: null }),
    ).toThrow(/scene reader/);
  });

  it('gives the estimate, its interval and the confidence from the reader; a close-up unlike the shipped training is not preliminary for it', () => {
    const reader = twoFeatures({ weights: [1, 0], intercept: 5, halfWidthMm: 0.8, typicalBelow: 4 });
    const out = (f: number[], over: Partial<SceneOutput> = {}): SceneOutput => ({
      probs: [0.95, 0.03, 0.02],
      worn: 0.99,
      support: 0.1,
      depthMm: 2,
      sigmaMm: 1,
      features: Float32Array.from(f),
      ...over,
    });
    const withReader = { ...sceneCal, shopReader: reader };
    const deep = sceneResult({ scene: out([1.5, 0]), syntheticMm: 6.5, confirmedBars: 0 }, withReader);
    expect(deep.estimatedDepthMm).toBe(6.5);
    expect(deep.depthRangeMm).toEqual({ min: 5.7, max: 7.3 });
    expect(deep.wear).toBe('good');
    expect(deep.isPreliminary).toBe(false);
    // the renders-only stack far off (1 mm against 6.5): the alignment says so, but does not make the reader's result preliminary
    const apart = sceneResult({ scene: out([1.5, 0]), syntheticMm: 1, confirmedBars: 0 }, withReader);
    expect(apart.modelAlignment).toBeLessThan(70);
    expect(apart.isPreliminary).toBe(false);
    expect(apart.preliminaryReasons).toEqual([]);
    expect(apart.estimatedDepthMm).toBe(6.5);
    // the gate unsure of a tread still does
    const unsure = sceneResult({ scene: out([1.5, 0], { probs: [0.5, 0.45, 0.05] }), syntheticMm: 6.5, confirmedBars: 0 }, withReader);
    expect(unsure.isPreliminary).toBe(true);
    expect(unsure.preliminaryReasons).toEqual(['tread_barely_visible']);
    // the shipped reading of the same photo: worn, whole scale, preliminary (its support is 0.1)
    const shipped = sceneResult({ scene: out([1.5, 0]), syntheticMm: 6.5, confirmedBars: 0 }, sceneCal);
    expect(shipped.estimatedDepthMm).toBeLessThan(1.5);
    expect(shipped.isPreliminary).toBe(true);
    expect(shipped.preliminaryReasons).toContain('unlike_training_photos');
    // near the 3 mm line the reader is sure of neither side
    const near = sceneResult({ scene: out([-2, 0]), syntheticMm: 3, confirmedBars: 0 }, withReader);
    expect(near.estimatedDepthMm).toBe(3);
    expect(near.confidence).toBeLessThan(0.6);
    // a photo unlike the shop's (spread (2.5² + 2.5²) / 2 = 6.25 over 4): the same estimate, preliminary, the whole scale, an even chance of each side
    const unlike = sceneResult({ scene: out([1.5, 2.5]), syntheticMm: 6.5, confirmedBars: 0 }, withReader);
    expect(unlike.estimatedDepthMm).toBe(6.5);
    expect(unlike.isPreliminary).toBe(true);
    expect(unlike.preliminaryReasons).toEqual(['unlike_shop_photos']);
    expect(unlike.depthRangeMm).toEqual({ min: 0.8, max: 8 });
    expect(unlike.confidence).toBeLessThanOrEqual(0.5);
    // a graph that gives no features, or other ones, cannot serve the reader
    for (const bad of [out([1]), out([1, Number.NaN]), { ...out([1, 0]), features: undefined }]) {
      expect(() => sceneResult({ scene: bad, syntheticMm: 3, confirmedBars: 0 }, withReader)).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE' }));
    }
  });
});
