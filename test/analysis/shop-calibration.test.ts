/** The shop calibration's arithmetic: the fit, the cross-validated decision, and its folding into a manifest. */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { combine, type TreadOutput } from '../../src/core/analysis/combine.js';
import { random } from '../../src/core/analysis/eval-metrics.js';
import { loadManifest } from '../../src/core/analysis/manifest.js';
import { MASK_GROOVE, MASK_TREAD, type MaskMaps } from '../../src/core/analysis/mask.js';
import {
  calibratedManifest,
  fitLine,
  fitShopCalibration,
  formatFit,
  IDENTITY,
  MAX_SLOPE,
  MIN_TIRES,
  pointFrom,
  type ShopFit,
  type ShopPoint,
} from '../../src/core/analysis/shop-calibration.js';
import { MODELS_DIR } from './helpers.js';

/**
 * n tires: true depths over 0.5–9 mm, a model that reads them as `read(true)` plus noise of
 * ±noise mm, an interval of ±half mm around each reading.
 */
function shop(n: number, read: (d: number) => number, options: { noise?: number; half?: number; seed?: number } = {}): ShopPoint[] {
  const r = random(options.seed ?? 1);
  const noise = options.noise ?? 0.6;
  const half = options.half ?? 1;
  return Array.from({ length: n }, () => {
    const gauge = 0.5 + 8.5 * r();
    const estimate = Math.max(0, Math.round((read(gauge) + noise * (2 * r() - 1)) * 10) / 10);
    return { gaugeMm: Math.round(gauge * 10) / 10, estimateMm: estimate, rangeMm: { min: Math.max(0, estimate - half), max: estimate + half } };
  });
}

describe('the least-absolute-error line', () => {
  it('recovers the line through the readings, unmoved by gross misreadings', () => {
    // the model reads 0.8 × depth − 0.4, so gauge ≈ 0.5 + 1.25 × estimate
    const points = shop(300, (d) => 0.8 * d - 0.4, { noise: 0.3 }).map((p, i) => (i % 10 === 0 ? { ...p, gaugeMm: p.gaugeMm + 4 } : p));
    const { intercept, slope } = fitLine(points);
    expect(slope).toBeCloseTo(1.25, 1);
    expect(Math.abs(intercept - 0.5)).toBeLessThan(0.15); // least squares gives ≈ 0.95 here (the outliers add 0.4 mm on average)
    // least squares would be pulled by the 30 readings 4 mm off; the median line is not
    const residuals = points.filter((_, i) => i % 10 !== 0).map((p) => p.gaugeMm - (intercept + slope * p.estimateMm));
    expect(Math.abs(residuals.reduce((s, v) => s + v, 0) / residuals.length)).toBeLessThan(0.1);
  });

  it('keeps the slope within its bounds, and fits only an offset when the estimates do not vary', () => {
    expect(fitLine(shop(100, (d) => d / 4)).slope).toBeCloseTo(MAX_SLOPE, 3);
    const flat = [1, 2, 3, 4, 5, 6].map((g) => ({ gaugeMm: g, estimateMm: 3, rangeMm: { min: 2, max: 4 } }));
    expect(fitLine(flat)).toEqual({ intercept: 0.5, slope: 1 }); // median of 1−3 … 6−3 = (0 + 1) / 2
  });
});

describe('deciding what to keep', () => {
  it('refuses fewer than MIN_TIRES tires', () => {
    expect(() => fitShopCalibration(shop(MIN_TIRES - 1, (d) => d))).toThrow(RangeError);
    expect(() => fitShopCalibration(shop(MIN_TIRES, (d) => d))).not.toThrow();
  });

  it('corrects a model that reads a shop’s photos shallow, judged on photos left out of the fit', () => {
    const f = fitShopCalibration(shop(200, (d) => 0.75 * d - 0.3));
    expect(f.depthApplied).toBe(true);
    expect(f.after.mae).toBeLessThan(f.before.mae - 0.3);
    expect(f.after.within1mm).toBeGreaterThan(f.before.within1mm);
    expect(f.correction.slope).toBeGreaterThan(1.2);
    expect(f.reasons[0]).toMatch(/^depth corrected: cross-validated error/);
  });

  it('leaves a model that reads the photos right as it is', () => {
    const f = fitShopCalibration(shop(200, (d) => d, { noise: 1, half: 0.8 }));
    expect(f.depthApplied).toBe(false);
    expect(f.intervalApplied).toBe(false);
    expect(f.correction).toEqual(IDENTITY);
    expect(f.after).toEqual(f.before);
    expect(f.reasons.join('\n')).toMatch(/depth left as it is.*\n.*within 75–85 %/);
  });

  it('widens an interval that holds too few readings, and narrows one that holds nearly all', () => {
    const narrow = fitShopCalibration(shop(200, (d) => d, { noise: 1, half: 0.3 }));
    expect(narrow.before.coverage).toBeLessThan(0.5);
    expect(narrow.intervalApplied).toBe(true);
    expect(narrow.correction.intervalScale).toBeGreaterThan(2);
    expect(Math.abs(narrow.after.coverage - 0.8)).toBeLessThan(0.06);
    const wide = fitShopCalibration(shop(200, (d) => d, { noise: 0.5, half: 3 }));
    expect(wide.before.coverage).toBe(1);
    expect(wide.intervalApplied).toBe(true);
    expect(wide.correction.intervalScale).toBeLessThan(0.3);
    expect(Math.abs(wide.after.coverage - 0.8)).toBeLessThan(0.06);
  });

  it('leaves the whole-scale intervals of photos unlike the training ones out of the interval factor, as the app never resizes them', () => {
    // the analyzer's answer for such a photo (scene.ts): preliminary, the interval 0.8–8.0 mm
    const outside = pointFrom(6.5, { estimatedDepthMm: 0.8, depthRangeMm: { min: 0.8, max: 8 }, isPreliminary: true });
    expect(outside.fixedInterval).toBe(true);
    // an ordinary interval, or a wide one on a result that is not preliminary, is resized as before
    expect(pointFrom(5, { estimatedDepthMm: 5, depthRangeMm: { min: 3.1, max: 6.9 }, isPreliminary: true }).fixedInterval).toBeUndefined();
    expect(pointFrom(5, { estimatedDepthMm: 5, depthRangeMm: { min: 1, max: 9 }, isPreliminary: false }).fixedInterval).toBeUndefined();
    // the even mixture of two readings that disagree is no estimate ± a half-width either, however narrow
    const mixture = { estimatedDepthMm: 1.2, depthRangeMm: { min: 0.1, max: 4.6 }, isPreliminary: true };
    expect(pointFrom(3, { ...mixture, preliminaryReasons: ['models_disagree'] }).fixedInterval).toBe(true);
    expect(pointFrom(3, { ...mixture, preliminaryReasons: ['tread_barely_visible'] }).fixedInterval).toBeUndefined();
    // 100 ordinary tires whose intervals are too narrow, and 150 close-ups answered with the whole scale
    const ordinary = shop(100, (d) => d, { noise: 1, half: 0.3 });
    const closeUps = shop(150, (d) => d, { noise: 1, seed: 7 }).map((p) =>
      pointFrom(p.gaugeMm, { estimatedDepthMm: p.estimateMm, depthRangeMm: { min: 0.8, max: 8 }, isPreliminary: true }),
    );
    const alone = fitShopCalibration(ordinary);
    const mixed = fitShopCalibration([...ordinary, ...closeUps]);
    // the same readings without the mark: their wide intervals would pull the factor down
    const unmarked = fitShopCalibration([...ordinary, ...closeUps.map((p) => ({ gaugeMm: p.gaugeMm, estimateMm: p.estimateMm, rangeMm: p.rangeMm }))]);
    expect(alone.correction.intervalScale).toBeGreaterThan(2);
    // the factor is what the ordinary intervals need (the line is fitted on every tire, so not to the digit)
    expect(Math.abs(mixed.fitted.intervalScale - alone.fitted.intervalScale)).toBeLessThan(0.25);
    expect(unmarked.fitted.intervalScale).toBeLessThan(mixed.fitted.intervalScale - 0.3);
    // every interval the whole scale: nothing to resize
    expect(fitShopCalibration(closeUps).fitted.intervalScale).toBe(1);
  });

  it('prints both rows and the reasons', () => {
    const text = formatFit(fitShopCalibration(shop(60, (d) => d - 1)));
    expect(text).toMatch(/^60 tires with a gauge reading and an answer; 5-fold cross-validation/);
    expect(text).toMatch(/as shipped\s+\d\.\d\d mm/);
    expect(text).toMatch(/with this calibration\s+\d\.\d\d mm/);
    expect(text).toMatch(/- depth corrected/);
  });
});

describe('folding the correction into the manifest', () => {
  const raw = JSON.parse(readFileSync(path.join(MODELS_DIR, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  // a shop whose photos read 20 % shallow, with intervals too narrow for them: both parts kept
  const fitted: ShopFit = fitShopCalibration(shop(100, (d) => 0.8 * d, { noise: 1, half: 0.4 }));

  const side = 20;
  /** Tread over the whole frame with a groove down column 10; or only 15 cells of tread (3.75 %: a tire for the gate, too few cells for the dense estimate). */
  const maps = (depthMm: number, sparse = false): MaskMaps => {
    const n = side * side;
    const label = new Uint8Array(n).fill(MASK_TREAD);
    for (let y = 0; y < side; y++) label[y * side + 10] = MASK_GROOVE;
    const treadProb = new Float32Array(n).fill(0.95);
    if (sparse) treadProb.fill(0.1, 15);
    return { side, label, treadProb, depth: new Float32Array(n).fill(depthMm) };
  };
  const tread = (depthMm: number): TreadOutput => ({ gate: 0.9, depthMm, sigmaMm: 0.6, wearLogits: [0.1, 0.3, 0.2, -0.1, -0.4] });

  it('moves every estimate and interval as the fit says, with or without the dense estimate, at any photo size', async () => {
    expect(fitted.depthApplied && fitted.intervalApplied).toBe(true);
    const out = calibratedManifest(raw, fitted, { created: new Date('2026-11-24T05:30:12Z'), labelsSha256: 'ab'.repeat(32) });
    const dir = await mkdtemp(path.join(tmpdir(), 'tw-shopcal-'));
    await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(out));
    const [base, shopped] = await Promise.all([loadManifest(MODELS_DIR), loadManifest(dir)]);
    // the scene reader's estimate takes the same line and interval factor (scene.ts shopLine)
    expect(shopped.calibration.scene?.shopLine).toEqual({
      intercept: fitted.correction.intercept,
      slope: fitted.correction.slope,
      intervalScale: fitted.correction.intervalScale,
    });
    expect(base.calibration.scene?.shopLine).toBeUndefined();
    await rm(dir, { recursive: true });
    const { intercept, slope, intervalScale } = fitted.correction;
    for (const depth of [0.8, 2.5, 4.4, 7.9]) {
      for (const longSide of [null, 400, 4000]) {
        for (const sparse of [false, true]) {
          const read = (cal: typeof base.calibration) => combine(tread(depth), maps(depth + 0.3, sparse), cal, depth + 0.2, longSide);
          const [a, b] = [read(base.calibration), read(shopped.calibration)];
          expect(a.denseMm === null).toBe(sparse);
          // the app rounds to 0.1 mm before and after (and the interval's ends outward): the corrected estimate is within a rounding step of the line
          const want = Math.max(0, intercept + slope * a.analysis.estimatedDepthMm);
          expect(Math.abs(b.analysis.estimatedDepthMm - want)).toBeLessThanOrEqual(0.05 * slope + 0.051);
          const halfA = a.analysis.depthRangeMm.max - a.analysis.estimatedDepthMm;
          const halfB = b.analysis.depthRangeMm.max - b.analysis.estimatedDepthMm;
          expect(Math.abs(halfB - halfA * slope * intervalScale)).toBeLessThanOrEqual(0.15 + 0.15 * slope * intervalScale);
        }
      }
    }
    // and exactly, before the app's rounding: every weight (the photo-size term's too) times the slope
    for (const which of ['stack', 'stackWithoutDense'] as const) {
      const [s0, s1] = [base.calibration[which], shopped.calibration[which]];
      expect(s1.intercept).toBeCloseTo(intercept + slope * s0.intercept, 12);
      for (const k of ['regressor', 'dense', 'classifier', 'crop', 'size'] as const) expect(s1[k]).toBeCloseTo(slope * s0[k], 12);
    }
    expect(shopped.calibration.intervalK).toBeCloseTo(base.calibration.intervalK * slope * intervalScale, 12);
    // the classifier's vote is read on the corrected depths (combine.ts, voteFor); nothing else changes
    expect(shopped.calibration.voteMap).toEqual({ intercept, slope });
    expect(base.calibration.voteMap).toBeUndefined();
    const rest = (c: typeof base.calibration) => ({ ...c, stack: 0, stackWithoutDense: 0, intervalK: 0, voteMap: 0, scene: { ...c.scene, shopLine: 0 } });
    expect(rest(shopped.calibration)).toEqual(rest(base.calibration));
    expect(shopped.version).toBe(`${base.version}+shop.20261124T0530`);
    expect(shopped.models).toEqual(base.models); // the same files, the same checksums
    expect(out.shopCalibration).toMatchObject({ base: base.version, tires: 100, labelsSha256: 'ab'.repeat(32), correction: fitted.correction });
    expect(out.validation).toEqual(raw.validation); // unknown fields are carried, not dropped
  });

  it('will not calibrate a shop calibration again, or a manifest without a version', () => {
    const once = calibratedManifest(raw, fitted, { created: new Date(), labelsSha256: null });
    expect(() => calibratedManifest(once, fitted, { created: new Date(), labelsSha256: null })).toThrow(/already a shop calibration/);
    expect(() => calibratedManifest({ ...raw, version: undefined }, fitted, { created: new Date(), labelsSha256: null })).toThrow(/no version/);
  });
});
