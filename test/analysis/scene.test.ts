import { describe, expect, it } from 'vitest';
import { wearForDepth } from '../../src/core/analysis/analyzer.js';
import {
  mixtureInterval,
  NOT_VISIBLE_MESSAGE,
  refuseUnlessTread,
  sceneOf,
  sceneDepth,
  sceneResult,
  wornProbability,
  type SceneCalibration,
  type SceneOutput,
} from '../../src/core/analysis/scene.js';
import { normalCdf } from '../../src/core/analysis/combine.js';
import { SCENE_CAL } from './helpers.js';

const cal: SceneCalibration = SCENE_CAL;

const out = (over: Partial<SceneOutput> = {}): SceneOutput => ({ probs: [0.95, 0.03, 0.02], worn: 0.1, depthMm: 6, sigmaMm: 0.8, ...over });

describe('the scene reader’s gate: three outcomes', () => {
  it('reads a tread, refuses no tire, and refuses a tire whose tread cannot be read', () => {
    expect(sceneOf(out(), cal).scene).toBe('tread');
    expect(sceneOf(out({ probs: [0.2, 0.1, 0.7] }), cal).scene).toBe('no_tire');
    expect(sceneOf(out({ probs: [0.2, 0.7, 0.1] }), cal).scene).toBe('tread_not_visible');
    // the thresholds are the manifest's, not an argmax: 0.55 unreadable is under 0.6 and is read
    expect(sceneOf(out({ probs: [0.4, 0.55, 0.05] }), cal).scene).toBe('tread');
    // no tire is checked first: at or above its threshold it wins over an unreadable tread
    expect(sceneOf(out({ probs: [0, 0.5, 0.5] }), { ...cal, notVisible: 0.5 }).scene).toBe('no_tire');
    expect(sceneOf(out({ probs: [0.2, 0.7, 0.1] }), cal).probabilities).toEqual({ tread: 0.2, treadNotVisible: 0.7, noTire: 0.1 });
  });

  it('throws the matching errors, each telling how to photograph the tread', () => {
    expect(() => refuseUnlessTread(sceneOf(out({ probs: [0.2, 0.1, 0.7] }), cal))).toThrow(expect.objectContaining({ code: 'NO_TIRE_DETECTED', status: 422 }));
    expect(() => refuseUnlessTread(sceneOf(out({ probs: [0.2, 0.7, 0.1] }), cal))).toThrow(
      expect.objectContaining({ code: 'TREAD_NOT_VISIBLE', status: 422, message: NOT_VISIBLE_MESSAGE }),
    );
    expect(NOT_VISIBLE_MESSAGE).toMatch(/face-on/);
    expect(NOT_VISIBLE_MESSAGE).toMatch(/light/);
    expect(() => refuseUnlessTread(sceneOf(out(), cal))).not.toThrow();
  });

  it('treats a reading no photo can give as a broken model, never as a refusal or an answer', () => {
    for (const bad of [
      out({ probs: [Number.NaN, 0, 0] }),
      out({ probs: [0.5, 0.5, 0.5] }),
      out({ probs: [1.2, -0.1, -0.1] }),
      out({ worn: Number.NaN }),
      out({ depthMm: Number.POSITIVE_INFINITY }),
      out({ sigmaMm: 0 }),
      out({ sigmaMm: Number.NaN }),
    ]) {
      expect(() => sceneOf(bad, cal)).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE' }));
    }
  });
});

describe('the result from the scene reader', () => {
  const result = (o: Partial<SceneOutput> = {}, syntheticMm = 6, c: SceneCalibration = cal, confirmedBars = 2) =>
    sceneResult({ scene: out(o), syntheticMm, confirmedBars }, c);

  it('puts the worn probability on the millimetre scale: usable → 8 mm, even → 3.0, worn → 0.8, linear between', () => {
    expect(sceneDepth(0, cal)).toBe(8);
    expect(sceneDepth(0.25, cal)).toBe(5.5);
    expect(sceneDepth(0.5, cal)).toBe(3);
    expect(sceneDepth(0.75, cal)).toBeCloseTo(1.9);
    expect(sceneDepth(1, cal)).toBeCloseTo(0.8);
    // the worn side of 3.0 mm exactly where the tire is more likely worn than not
    expect(sceneDepth(0.51, cal)).toBeLessThan(3);
    expect(sceneDepth(0.49, cal)).toBeGreaterThan(3);
  });

  it('answers every field consistently: the band of the rounded depth, an interval around it, 0..1 confidence', () => {
    const r = result({ worn: 0.25 });
    expect(r.estimatedDepthMm).toBe(5.5);
    expect(r.wear).toBe(wearForDepth(5.5));
    // 1.2816 × 1.5 = 1.92 mm either side
    expect(r.depthRangeMm).toEqual({ min: 3.5, max: 7.5 });
    expect(r.confidence).toBeGreaterThanOrEqual(0);
    expect(r.confidence).toBeLessThanOrEqual(1);
    // the network's own depth and sigma outputs are checked, not used
    expect(result({ worn: 0.25, depthMm: 1, sigmaMm: 9 })).toEqual(r);
  });

  it('weighs in the synthetic stack by syntheticWeight', () => {
    expect(result({ worn: 0.5 }, 7, { ...cal, syntheticWeight: 0 }).estimatedDepthMm).toBe(3);
    expect(result({ worn: 0.5 }, 7, { ...cal, syntheticWeight: 0.25 }).estimatedDepthMm).toBe(4);
  });

  it('is sure of neither band near the line, and never very sure of a band: a real photo’s depth is uncertain by realSigmaMm', () => {
    const near = result({ worn: 0.48 });
    expect(near.confidence).toBeLessThan(0.55);
    const usable = result({ worn: 0.02 });
    expect(usable.wear).toBe('new');
    expect(usable.confidence).toBeGreaterThan(near.confidence);
    expect(usable.confidence).toBeLessThan(0.8);
    const worn = result({ worn: 0.98 });
    expect(worn.wear).toBe('critical');
    expect(worn.confidence).toBeGreaterThan(0.5);
    // a narrower real-photo spread makes the same reading surer of its band
    expect(result({ worn: 0.02 }, 6, { ...cal, realSigmaMm: 0.5 }).confidence).toBeGreaterThan(usable.confidence);
  });

  it('calibrates the worn probability with the manifest’s Platt map', () => {
    expect(wornProbability(out({ worn: 0.5 }), cal)).toBeCloseTo(0.5);
    expect(wornProbability(out({ worn: 0.9 }), { ...cal, wornPlatt: { a: 0.5, b: 0 } })).toBeCloseTo(0.75, 2);
    expect(wornProbability(out({ worn: 0.5 }), { ...cal, wornPlatt: { a: 1, b: -1 } })).toBeCloseTo(0.269, 2);
    expect(result({ worn: 0.5 }, 6, { ...cal, wornPlatt: { a: 1, b: -1 } }).estimatedDepthMm).toBeGreaterThan(3);
  });

  it('reads the worn logit where the model gives one, so that saturated probabilities keep their order', () => {
    const flat = { ...cal, wornPlatt: { a: 0.2, b: 0 } };
    // two photos whose float probability is 1 exactly: without the logit they tie
    const a = out({ worn: 1, wornLogit: 20 });
    const b = out({ worn: 1, wornLogit: 30 });
    expect(wornProbability(out({ worn: 1 }), flat)).toBeCloseTo(wornProbability(out({ worn: 1 - 1e-9 }), flat), 6);
    expect(wornProbability(a, flat)).toBeCloseTo(1 / (1 + Math.exp(-4)), 6);
    expect(wornProbability(b, flat)).toBeGreaterThan(wornProbability(a, flat));
    expect(sceneResult({ scene: a, syntheticMm: 6, confirmedBars: 0 }, flat).estimatedDepthMm).toBeGreaterThan(
      sceneResult({ scene: b, syntheticMm: 6, confirmedBars: 0 }, flat).estimatedDepthMm,
    );
    // a logit that is not a number is a broken model
    expect(() => sceneOf(out({ wornLogit: Number.NaN }), cal)).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE' }));
  });

  it('is preliminary when the readings disagree or the reader is unsure of a tread, and counts wear bars only on a sure tread', () => {
    const sure = result({ worn: 0.1 }, 7);
    expect(sure.modelAlignment).toBeGreaterThanOrEqual(70);
    expect(sure.isPreliminary).toBe(false);
    expect(sure.preliminaryReasons).toEqual([]);
    expect(sure.twiConsensusCount).toBe(2);
    const apart = result({ worn: 0.1 }, 2);
    expect(apart.modelAlignment).toBeLessThan(70);
    expect(apart.isPreliminary).toBe(true);
    expect(apart.preliminaryReasons).toEqual(['models_disagree']);
    expect(apart.twiConsensusCount).toBe(0);
    const unsure = result({ probs: [0.55, 0.4, 0.05], worn: 0.1 }, 7);
    expect(unsure.isPreliminary).toBe(true);
    expect(unsure.preliminaryReasons).toContain('tread_barely_visible');
    expect(result({ probs: [0.55, 0.4, 0.05], worn: 0.1 }, 2).preliminaryReasons).toEqual(['models_disagree', 'tread_barely_visible']);
    expect(unsure.twiConsensusCount).toBe(0);
    // readings that disagree: the interval is their mixture's, the stack weighing 1 − the support
    expect(sure.depthRangeMm.min).toBeGreaterThanOrEqual(sure.estimatedDepthMm - 2); // ± 1.2816 × 1.5, no more
    expect(apart.depthRangeMm).toEqual(sure.depthRangeMm); // full support (none given): the stack weighs nothing
    const doubted = result({ worn: 0.1, support: 0.5 }, 2);
    expect(doubted.preliminaryReasons).toContain('models_disagree');
    expect(doubted.estimatedDepthMm).toBe(sure.estimatedDepthMm);
    expect(doubted.depthRangeMm.min).toBeLessThan(2); // reaches the stack's 2 mm
    expect(doubted.depthRangeMm.max).toBeGreaterThan(doubted.estimatedDepthMm);
    const lessDoubted = result({ worn: 0.1, support: 0.8 }, 2);
    expect(lessDoubted.depthRangeMm.min).toBeGreaterThan(doubted.depthRangeMm.min);
    expect(lessDoubted.depthRangeMm.min).toBeLessThan(sure.depthRangeMm.min);
    const wornApart = result({ worn: 0.97, support: 0.5 }, 7);
    expect(wornApart.preliminaryReasons).toContain('models_disagree');
    expect(wornApart.estimatedDepthMm).toBeLessThan(3);
    expect(wornApart.depthRangeMm.max).toBeGreaterThan(7);
    const readButNotSure = result({ probs: [0.8, 0.15, 0.05], worn: 0.1 }, 7);
    expect(readButNotSure.isPreliminary).toBe(false);
    expect(readButNotSure.twiConsensusCount).toBe(0); // under twiMinTread
  });

  it('gives readings that disagree the central 80 % of their mixture', () => {
    const [lo, hi] = mixtureInterval(4, 4, 1.5);
    expect(lo).toBeCloseTo(4 - 1.2816 * 1.5, 3);
    expect(hi).toBeCloseTo(4 + 1.2816 * 1.5, 3);
    // far apart: each tail is a fifth of one reading's Gaussian, 0.8416 sd beyond it
    const [a, b] = mixtureInterval(1, 7, 1);
    expect(a).toBeCloseTo(1 - 0.8416, 2);
    expect(b).toBeCloseTo(7 + 0.8416, 2);
    // symmetric in its readings, and 80 % of the mixture inside
    expect(mixtureInterval(7, 1, 1)).toEqual([a, b]);
    const cdf = (x: number) => 0.5 * normalCdf(x - 1) + 0.5 * normalCdf(x - 7);
    expect(cdf(b) - cdf(a)).toBeCloseTo(0.8, 6);
    // between: wider than one reading's, narrower than both intervals joined
    const [c, d] = mixtureInterval(3, 4.5, 1.5);
    expect(d - c).toBeGreaterThan(2 * 1.2816 * 1.5);
    expect(d - c).toBeLessThan(1.5 + 2 * 1.2816 * 1.5);
    // weighted: nothing on the second is the first alone; a little on it stretches the interval toward it
    const [e, f] = mixtureInterval(1, 7, 1, 0);
    expect(e).toBeCloseTo(1 - 1.2816, 3);
    expect(f).toBeCloseTo(1 + 1.2816, 3);
    const [g, h] = mixtureInterval(1, 7, 1, 0.2);
    expect(g).toBeCloseTo(1 - 1.1503, 3); // 0.8 · Φ(g − 1) = 0.1
    expect(h).toBeCloseTo(7, 2); // 0.8 + 0.2 · Φ(h − 7) = 0.9
    const wcdf = (x: number) => 0.8 * normalCdf(x - 1) + 0.2 * normalCdf(x - 7);
    expect(wcdf(h) - wcdf(g)).toBeCloseTo(0.8, 6);
  });

  it('says so where the photo is unlike those the worn probability learned from: the same estimate, a lower confidence, the whole scale, preliminary', () => {
    const withSupport = { ...cal, supportBelow: 0.5 };
    const like = result({ worn: 0.97, support: 0.99 }, 1.2, withSupport);
    const unlike = result({ worn: 0.97, support: 0.2 }, 1.2, withSupport);
    // the order of the readings stays the network's: the estimate does not move
    expect(unlike.estimatedDepthMm).toBe(like.estimatedDepthMm);
    expect(unlike.wear).toBe(like.wear);
    expect(like.isPreliminary).toBe(false);
    expect(like.depthRangeMm).toEqual(result({ worn: 0.97 }, 1.2, withSupport).depthRangeMm);
    // P(worn) 0.97 mixed with an even chance by the support 0.2: 0.2 × 0.97 + 0.8 × 0.5 = 0.594
    expect(unlike.confidence).toBeLessThan(0.6);
    expect(unlike.confidence).toBeLessThan(like.confidence);
    expect(unlike.isPreliminary).toBe(true);
    expect(unlike.preliminaryReasons).toContain('unlike_training_photos');
    expect(unlike.preliminaryReasons).not.toContain('unlike_shop_photos');
    expect(unlike.twiConsensusCount).toBe(0);
    expect(unlike.depthRangeMm).toEqual({ min: 0.8, max: 8 });
    // without the manifest's supportBelow the support still weighs the confidence, never the interval
    const noRule = result({ worn: 0.97, support: 0.2 }, 1.2);
    expect(noRule.confidence).toBe(unlike.confidence);
    expect(noRule.depthRangeMm).toEqual(like.depthRangeMm);
    // no support output (models before tread-2026.11.29.3): full support
    expect(result({ worn: 0.97 }, 1.2, withSupport)).toEqual(result({ worn: 0.97, support: 1 }, 1.2, withSupport));
    // a shop's line maps the scale's ends as it maps the estimate
    const shop = result({ worn: 0.97, support: 0.2 }, 1.2, { ...withSupport, shopLine: { intercept: 0.5, slope: 1.5, intervalScale: 2 } });
    expect(shop.depthRangeMm).toEqual({ min: 1.7, max: 12.5 });
    // a support no photo can give is a broken model
    for (const support of [Number.NaN, -0.1, 1.5]) expect(() => sceneOf(out({ support }), cal)).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE' }));
  });

  it('applies a shop’s line to the estimate and its interval', () => {
    // the synthetic stack agreeing (3 mm, as the worn probability 0.5 reads), so that only the line widens the interval
    const plain = result({ worn: 0.5 }, 3);
    expect(plain.preliminaryReasons).not.toContain('models_disagree');
    const shop = result({ worn: 0.5 }, 3, { ...cal, shopLine: { intercept: 0.5, slope: 1.5, intervalScale: 2 } });
    expect(shop.estimatedDepthMm).toBe(5);
    const width = (r: typeof plain) => r.depthRangeMm.max - r.depthRangeMm.min;
    expect(width(shop)).toBeGreaterThan(2.5 * width(plain));
  });

  it('never reports a depth under 0, and refuses a synthetic stack that no tire can give', () => {
    expect(result({ worn: 1 }, 6, { ...cal, shopLine: { intercept: -3, slope: 1, intervalScale: 1 } }).estimatedDepthMm).toBe(0);
    expect(() => result({}, Number.NaN)).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE' }));
    expect(() => result({}, 45)).toThrow(expect.objectContaining({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/no usable reading/) }));
  });
});
