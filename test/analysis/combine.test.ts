import { describe, expect, it } from 'vitest';
import { combine, denseEstimate, MIN_TREAD_SHARE, photoSizeFeature, treadShare, voteFor, type TreadOutput } from '../../src/core/analysis/combine.js';
import { treadHealthIndex, WEAR_CLASSES } from '../../src/core/analysis/analyzer.js';
import type { Calibration } from '../../src/core/analysis/manifest.js';
import { findTwiBars, MASK_GROOVE, MASK_TREAD, MASK_TWI, type MaskMaps } from '../../src/core/analysis/mask.js';

const cal: Calibration = {
  gateThreshold: 0.5,
  minTreadShare: 0.01,
  dense: { percentile: 10, intercept: 0, slope: 1, minPixels: 20 },
  stack: { intercept: 0, regressor: 0.5, dense: 0.5, classifier: 0, crop: 0, size: 0 },
  stackWithoutDense: { intercept: 0, regressor: 1, dense: 0, classifier: 0, crop: 0, size: 0 },
  bandCentres: [8.5, 6, 4, 2.3, 1],
  intervalK: 1.5,
  wearTemperature: 1,
  confidencePlatt: { a: 1, b: 0 },
};

const SIDE = 20;
/** A tread filling the frame with one vertical main groove in column 10 and a TWI bar across it. */
function maps(depthMm: number, withTwi = true): MaskMaps {
  const n = SIDE * SIDE;
  const label = new Uint8Array(n).fill(MASK_TREAD);
  for (let y = 0; y < SIDE; y++) label[y * SIDE + 10] = MASK_GROOVE;
  if (withTwi) label[10 * SIDE + 10] = MASK_TWI;
  return { side: SIDE, label, treadProb: new Float32Array(n).fill(0.95), depth: new Float32Array(n).fill(depthMm) };
}

const tread = (depthMm: number, over: Partial<TreadOutput> = {}): TreadOutput => ({
  gate: 0.9,
  depthMm,
  sigmaMm: 0.5,
  wearLogits: [0, 0, 0, 0, 0],
  ...over,
});

describe('combining the estimators', () => {
  it('stacks the regressor’s reading of the tread crop, the whole-frame reading standing in without one', () => {
    const withCrop: Calibration = { ...cal, stack: { intercept: 0, regressor: 0.25, dense: 0.5, classifier: 0, crop: 0.25, size: 0 } };
    expect(combine(tread(4), maps(4), withCrop, 6).analysis.estimatedDepthMm).toBe(4.5);
    const c = combine(tread(4), maps(4), withCrop, null);
    expect(c.analysis.estimatedDepthMm).toBe(4);
    expect(c.cropMm).toBeNull();
    expect(combine(tread(4), maps(4), cal, 6).analysis.estimatedDepthMm).toBe(4); // crop weight 0: older manifests
  });

  it('adds the photo-size term: log2 of the long side over the reference, from 0 up to the cap', () => {
    const sized: Calibration = {
      ...cal,
      stack: { ...cal.stack, size: 0.2 },
      stackWithoutDense: { ...cal.stackWithoutDense, size: 0.4 },
      photoSize: { reference: 400, cap: 2.5 },
    };
    expect(photoSizeFeature(400, sized)).toBe(0);
    expect(photoSizeFeature(300, sized)).toBe(0); // smaller photos: no term, never negative
    expect(photoSizeFeature(1600, sized)).toBe(2);
    expect(photoSizeFeature(4000, sized)).toBe(2.5); // capped at the largest calibration photo
    expect(photoSizeFeature(null, sized)).toBe(0);
    expect(photoSizeFeature(Number.NaN, sized)).toBe(0);
    expect(photoSizeFeature(4000, cal)).toBe(0); // a manifest without the term
    expect(combine(tread(4), maps(4), sized, null, 400).analysis.estimatedDepthMm).toBe(4);
    expect(combine(tread(4), maps(4), sized, null, 1600).analysis.estimatedDepthMm).toBe(4.4);
    expect(combine(tread(4), maps(4), sized, null, 12_000).analysis.estimatedDepthMm).toBe(4.5);
    expect(combine(tread(4), maps(4), sized, null).analysis.estimatedDepthMm).toBe(4); // size unknown
    // the stack without the dense estimate carries its own coefficient
    const noDense = maps(4);
    noDense.treadProb.fill(0.95);
    const thin = { ...sized, dense: { ...sized.dense, minPixels: 10_000 } };
    expect(combine(tread(4), noDense, thin, null, 1600).analysis.estimatedDepthMm).toBe(4.8);
  });

  it('refuses an image the gate does not see as tread', () => {
    expect(() => combine(tread(5, { gate: 0.1 }), maps(5), cal)).toThrow(expect.objectContaining({ code: 'NO_TIRE_DETECTED' }));
  });

  it('refuses an image where the segmenter sees almost no tread', () => {
    const m = maps(5);
    m.treadProb.fill(0);
    expect(() => combine(tread(5), m, cal)).toThrow(expect.objectContaining({ code: 'NO_TIRE_DETECTED' }));
  });

  it('refuses a broken network reading (NaN, an infinity, a sigma that is not positive, far below 0) instead of reporting 0 mm or no tire', () => {
    const unavailable = expect.objectContaining({ code: 'MODEL_UNAVAILABLE' });
    for (const bad of [Number.NaN, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]) {
      expect(() => combine(tread(bad), maps(5), cal)).toThrow(unavailable);
      expect(() => combine(tread(5, { sigmaMm: bad }), maps(5), cal)).toThrow(unavailable);
      expect(() => combine(tread(5, { wearLogits: [0, bad, 0, 0, 0] }), maps(5), cal)).toThrow(unavailable);
      expect(() => combine(tread(5), maps(5), cal, bad)).toThrow(unavailable); // the crop reader
      expect(() => combine(tread(5), maps(bad), cal)).toThrow(unavailable); // the dense map
      const m = maps(5);
      m.treadProb.fill(bad);
      expect(() => combine(tread(5), m, cal)).toThrow(unavailable); // not "no tire": the photo is not at fault
    }
    expect(() => combine(tread(5, { sigmaMm: -2 }), maps(5), cal)).toThrow(unavailable);
    expect(() => combine(tread(5, { sigmaMm: 0 }), maps(5), cal)).toThrow(unavailable);
    expect(() => combine(tread(-1e6), maps(5), cal)).toThrow(unavailable);
    expect(() => combine(tread(5), maps(5), cal, -1e6)).toThrow(unavailable);
    expect(() => combine(tread(5, { wearLogits: [0, 0, 0] }), maps(5), cal)).toThrow(unavailable);
    // a bald tire may stack a little under 0: that still reads 0.0 mm
    expect(combine(tread(-0.4), maps(-0.4), cal).analysis.estimatedDepthMm).toBe(0);
  });

  it('reports the band of the reported depth, whatever the classifier votes', () => {
    const { analysis } = combine(tread(2.2, { wearLogits: [9, 0, 0, 0, 0] }), maps(2.2), cal);
    expect(analysis.estimatedDepthMm).toBe(2.2);
    expect(analysis.wear).toBe('worn');
  });

  it('blends the two estimates and keeps the interval around the estimate', () => {
    const { analysis } = combine(tread(6), maps(4), cal);
    expect(analysis.estimatedDepthMm).toBe(5);
    expect(analysis.depthRangeMm.min).toBeLessThanOrEqual(5);
    expect(analysis.depthRangeMm.max).toBeGreaterThanOrEqual(5);
  });

  it('never reports a negative lower bound', () => {
    const { analysis } = combine(tread(0.3, { sigmaMm: 2 }), maps(0.3), cal);
    expect(analysis.depthRangeMm.min).toBe(0);
  });

  it('is confident and not preliminary when the estimators and the classifier agree', () => {
    const { analysis } = combine(tread(6, { wearLogits: [0, 6, 0, 0, 0] }), maps(6), cal);
    expect(analysis.modelAlignment).toBeGreaterThanOrEqual(90);
    expect(analysis.isPreliminary).toBe(false);
  });

  it('flags disagreement between the estimators as preliminary', () => {
    const { analysis } = combine(tread(8), maps(2), cal);
    expect(analysis.modelAlignment).toBeLessThan(70);
    expect(analysis.isPreliminary).toBe(true);
    expect(analysis.preliminaryReasons).toEqual(['models_disagree']);
  });

  it('flags a barely visible tread as preliminary', () => {
    // A 40 x 40 frame with 40 tread cells: 2.5 % of it, above the manifest's no-tire line (1 %) and
    // under the 5 % of docs/API.md §2, and enough cells (minPixels 20) for a dense estimate that agrees
    // with the regressor and the classifier: the share is the only reason to be preliminary.
    const side = 40;
    const barelyVisible = (cells: number): MaskMaps => ({
      side,
      label: new Uint8Array(side * side).fill(MASK_TREAD),
      treadProb: new Float32Array(side * side).fill(0.95, 0, cells),
      depth: new Float32Array(side * side).fill(6),
    });
    const m = barelyVisible(40);
    expect(treadShare(m)).toBeGreaterThanOrEqual(cal.minTreadShare);
    expect(treadShare(m)).toBeLessThan(MIN_TREAD_SHARE);
    const c = combine(tread(6, { wearLogits: [0, 6, 0, 0, 0] }), m, cal);
    expect(c.denseMm).toBeCloseTo(6, 5);
    expect(c.analysis.modelAlignment).toBeGreaterThanOrEqual(90);
    expect(c.analysis.isPreliminary).toBe(true);
    expect(c.analysis.preliminaryReasons).toEqual(['tread_barely_visible']);
    // the same tread on 5 % of the frame is not
    const visible = barelyVisible(side * side * MIN_TREAD_SHARE);
    expect(treadShare(visible)).toBe(MIN_TREAD_SHARE);
    expect(combine(tread(6, { wearLogits: [0, 6, 0, 0, 0] }), visible, cal).analysis.isPreliminary).toBe(false);
  });

  it('gives depth32nds as the nearest whole 32nd inside the wear band, as the counter UI shows it', () => {
    // [estimate mm, 32nds]: plain rounding would give 2, 4 and 6 for 1.4, 2.8 and 5.0 mm
    for (const [mm, expected] of [
      [1.4, 1],
      [2.0, 3],
      [2.8, 3],
      [3.2, 4],
      [4.8, 6],
      [5.0, 7],
      [8.0, 10],
    ] as const) {
      expect(combine(tread(mm), maps(mm), cal).analysis, String(mm)).toMatchObject({ estimatedDepthMm: mm, depth32nds: expected });
    }
  });

  it('reports as twiConsensusCount the TWI bars findTwiBars confirms (test/analysis/twi.test.ts has the rule)', () => {
    // one groove, one bar across it: no second groove to agree with it
    expect(findTwiBars(maps(5)).map((b) => b.confirmed)).toEqual([false]);
    expect(combine(tread(5), maps(5), cal).analysis.twiConsensusCount).toBe(0);
    // a second groove in column 4 with a bar on the same row: both count
    const two = maps(5);
    for (let y = 0; y < SIDE; y++) two.label[y * SIDE + 4] = MASK_GROOVE;
    two.label[10 * SIDE + 4] = MASK_TWI;
    expect(findTwiBars(two).map((b) => b.confirmed)).toEqual([true, true]);
    expect(combine(tread(5), two, cal).analysis.twiConsensusCount).toBe(2);
  });

  it('takes the dense estimate from a low percentile of tread pixels', () => {
    const m = maps(6);
    for (let i = 0; i < 100; i++) m.depth[i] = 2;
    expect(denseEstimate(m, cal)).toBeCloseTo(2, 5);
  });

  it('reads the classifier’s vote on a shop calibration’s corrected depths, and as given without one', () => {
    const probs = [0.1, 0.2, 0.4, 0.25, 0.05]; // new … critical
    for (const [i, wear] of WEAR_CLASSES.entries()) {
      expect(voteFor(wear, probs, undefined)).toBe(probs[i]);
      expect(voteFor(wear, probs, { intercept: 0, slope: 1 })).toBeCloseTo(probs[i]!, 12);
    }
    // gauge = 0.5 + 1.2 × estimate: "medium" (3–5 mm) now stands for 4.1–6.5 mm, "worn" (1.6–3) for 2.42–4.1, ...
    const map = { intercept: 0.5, slope: 1.2 };
    // medium band 3–5 mm: 0.4 of medium's span 4.1–6.5 (0.9 / 2.4 mm) and worn's 2.42–4.1 above 3 (1.1 / 1.68 mm)
    expect(voteFor('medium', probs, map)).toBeCloseTo((0.4 * 0.9) / 2.4 + (0.25 * 1.1) / 1.68, 12);
    // new band ≥ 7 mm: all of new's 8.9–12.5, good's 6.5–8.9 above 7 (1.9 / 2.4)
    expect(voteFor('new', probs, map)).toBeCloseTo(0.1 + (0.2 * 1.9) / 2.4, 12);
    // every class's vote is shared out among the bands: they still sum to 1
    for (const m of [map, { intercept: -0.8, slope: 0.7 }, { intercept: 2, slope: 1.9 }]) {
      expect(WEAR_CLASSES.reduce((sum, wear) => sum + voteFor(wear, probs, m), 0)).toBeCloseTo(1, 12);
    }
  });
});

describe('the numbers a result is made of, pinned', () => {
  it('tread health index: 0 at the 1.6 mm limit, 100 at 8 mm new, linear between, clamped outside', () => {
    expect([0, 1.6, 3.2, 4.8, 6.4, 8, 9.5].map(treadHealthIndex)).toEqual([0, 0, 25, 50, 75, 100, 100]);
    expect(treadHealthIndex(5.0)).toBe(53); // (5.0 − 1.6) / 6.4 = 53.1 %
  });

  it('isPreliminary is exactly modelAlignment < 70 when the tread is well in view', () => {
    let seen69 = false;
    let seen70 = false;
    for (let offset = 0; offset <= 3; offset += 0.01) {
      const a = combine(tread(5), maps(5 + offset), cal, null).analysis;
      expect(a.isPreliminary).toBe(a.modelAlignment < 70);
      expect(a.preliminaryReasons).toEqual(a.modelAlignment < 70 ? ['models_disagree'] : []);
      seen69 ||= a.modelAlignment === 69;
      seen70 ||= a.modelAlignment === 70;
    }
    expect([seen69, seen70]).toEqual([true, true]);
  });

  it('the 80 % range: its low end rounded down and its high end up to 0.1 mm, never tighter than the interval', () => {
    // raw 4.31 mm, half-width 1.5 × 0.5 = 0.75: 3.56 → 3.5 and 5.06 → 5.1
    const a = combine(tread(4.31), maps(4.31), cal, null).analysis;
    expect(a.estimatedDepthMm).toBe(4.3);
    expect(a.depthRangeMm).toEqual({ min: 3.5, max: 5.1 });
  });

  it('without a dense estimate the two estimators count as half agreeing (never as agreeing)', () => {
    const noDense: Calibration = { ...cal, dense: { ...cal.dense, minPixels: 10_000 } };
    const a = combine(tread(4), maps(4), noDense, null).analysis;
    // 0.7 × 0.5 + 0.3 × 0.2 (five equal wear votes) = 41
    expect(a.modelAlignment).toBe(41);
    expect(a.isPreliminary).toBe(true);
  });
});
