/** The figures `npm run eval` prints, on hand-made outcomes whose answers are worked out here. */
import { expect, test } from 'vitest';
import { formatReport } from '../../src/core/analysis/eval-format.js';
import { centralInterval, evaluate, type Sample, type Truth } from '../../src/core/analysis/eval-metrics.js';
import { wearForDepth } from '../../src/core/analysis/index.js';

function analysed(truth: Truth, depthMm: number | null, estimate: number, confidence: number, range: [number, number], ms = 10, preliminary = false): Sample {
  return {
    file: `${truth}-${depthMm}-${estimate}.jpg`,
    depthMm,
    truth,
    outcome: {
      ms,
      analysis: {
        wear: wearForDepth(estimate),
        confidence,
        estimatedDepthMm: estimate,
        depthRangeMm: { min: range[0], max: range[1] },
        treadHealthIndex: 0,
        isPreliminary: preliminary,
        modelAlignment: 80,
        twiConsensusCount: 0,
        modelVersion: 'test',
        depth32nds: 0,
      },
    },
  };
}

const refused = (truth: Truth, ms = 5): Sample => ({ file: `${truth}.jpg`, depthMm: null, truth, outcome: { error: 'NO_TIRE_DETECTED', ms } });

test('depth, wear, interval, calibration and refusal figures', () => {
  const samples = [
    // truth good (6.0): read 5.5 (good, right, within 1 mm, inside its range), confidence 0.9
    analysed('good', 6.0, 5.5, 0.9, [5, 6.5], 10),
    // truth worn (2.0): read 3.5 (medium, wrong, 1.5 mm off, range misses), confidence 0.9, preliminary
    analysed('worn', 2.0, 3.5, 0.9, [3, 4], 20, true),
    // truth critical (1.0): read 1.2 (critical, right), confidence 0.5
    analysed('critical', 1.0, 1.2, 0.5, [0.5, 2], 30),
    // truth new (8.0): read 7.0 (new, right, exactly 1 mm off: counts as within), confidence 0.5
    analysed('new', 8.0, 7.0, 0.5, [7.5, 9], 40),
    refused('medium', 50),
    refused('notire', 60),
    analysed('notire', null, 4.0, 0.5, [3, 5], 70),
  ];
  const r = evaluate(samples);
  expect(r).toMatchObject({ images: 7, tires: 5, nonTires: 2, errors: { NO_TIRE_DETECTED: 2 } });
  expect(r.depth!.n).toBe(4);
  expect(r.depth!.mae).toBeCloseTo((0.5 + 1.5 + 0.2 + 1.0) / 4, 10);
  expect(r.depth!.within1mm).toBe(0.75);
  expect(r.preliminary).toEqual({ share: 0.25, maePreliminary: 1.5, maeConfirmed: expect.closeTo((0.5 + 0.2 + 1.0) / 3, 10) });
  expect(r.wear!.accuracy).toBe(0.75);
  // Four classes present, recalls 1, 0, 1, 1.
  expect(r.wear!.balancedAccuracy).toBe(0.75);
  expect(r.wear!.confusion.worn!.medium).toBe(1);
  expect(r.wear!.confusion.good!.good).toBe(1);
  // Worn-vs-usable: bad = worn and critical truths (recall 1 of 2), usable = good and new (2 of 2).
  expect(r.wornVsUsable).toEqual({
    n: 4,
    balancedAccuracy: 0.75,
    badRecall: 0.5,
    usableRecall: 1,
    allTires: { n: 5, balancedAccuracy: expect.closeTo((1 / 2 + 2 / 3) / 2, 10) },
  });
  // Over all five tires the refused medium one (usable) counts as wrong: usable 2 of 3, bad 1 of 2.
  // The ranges of good, critical and new hold the truth; worn's (3–4 around 2.0) does not.
  expect(r.interval!.coverage).toBe(0.75);
  // ECE: bin 0.9 holds {right, wrong} → |0.9 − 0.5| × 2/4; bin 0.5 holds {right, right} → |0.5 − 1| × 2/4.
  expect(r.calibrationError).toBeCloseTo(0.2 + 0.25, 10);
  expect(r.meanConfidence).toBeCloseTo(0.7, 10);
  expect(r.tiresRefused).toBe(0.2);
  expect(r.nonTiresRefused).toBe(0.5);
  expect(r.msPerImage.median).toBe(40);
  // By the band of the true depth, in band order; medium's only tire was refused, so no row.
  expect(r.depthByBand).toEqual([
    { band: 'new', n: 1, mae: 1.0, within1mm: 1, bias: -1.0 },
    { band: 'good', n: 1, mae: 0.5, within1mm: 1, bias: -0.5 },
    { band: 'worn', n: 1, mae: 1.5, within1mm: 0, bias: 1.5 },
    { band: 'critical', n: 1, mae: expect.closeTo(0.2, 10), within1mm: 1, bias: expect.closeTo(0.2, 10) },
  ]);

  const text = formatReport(r, 'tread-test');
  expect(text).toContain('depth MAE           0.80 mm over 4');
  expect(text).toContain('calibration error   0.450 (ECE, 10 bins; mean confidence 70.0 % vs accuracy 75.0 %)');
  expect(text).toContain(
    'worn-vs-usable      balanced accuracy 0.750 (bad recall 50.0 %, usable recall 100.0 %)\n                    0.583 over all 5 tires, counting the 1 without an answer as wrong',
  );
  expect(text).toContain('tires refused       20.0 %');
  expect(text).toContain(`${' '.repeat(20)}new         1     1.00       100.0 %     -1.00\n`);
  expect(text).toContain(`${' '.repeat(20)}worn        1     1.50         0.0 %     +1.50\n`);
  expect(text).not.toMatch(/^ {20}medium/m);
});

test('a file that could not be read counts as an error but adds no time', () => {
  const unread: Sample = { file: 'gone.jpg', depthMm: 5, truth: 'good', outcome: { error: 'FILE_UNREADABLE', ms: null } };
  const r = evaluate([analysed('good', 6.0, 5.5, 0.9, [5, 6.5], 30), unread, analysed('new', 8.0, 8.2, 0.9, [7, 9], 50)]);
  expect(r.errors).toEqual({ FILE_UNREADABLE: 1 });
  expect(r.msPerImage).toEqual({ median: 50, p95: 50, mean: 40 });
  // nothing read at all: no time line rather than NaN
  const none = evaluate([unread]);
  expect(formatReport(none, 't')).not.toContain('time per image');
  expect(formatReport(none, 't')).not.toContain('NaN');
});

test('when every result (or none) is preliminary, the report leaves that half out instead of printing NaN', () => {
  const all = evaluate([analysed('good', 6.0, 5.5, 0.9, [5, 6.5], 10, true), analysed('worn', 2.0, 2.5, 0.9, [2, 3], 10, true)]);
  expect(all.preliminary).toEqual({ share: 1, maePreliminary: 0.5, maeConfirmed: null });
  expect(formatReport(all, 't')).toMatch(/^preliminary {9}100\.0 % of results; MAE 0\.50 mm there$/m);
  const none = evaluate([analysed('good', 6.0, 5.5, 0.9, [5, 6.5], 10)]);
  expect(formatReport(none, 't')).toMatch(/^preliminary {9}0\.0 % of results; MAE 0\.50 mm elsewhere$/m);
  expect(formatReport(all, 't') + formatReport(none, 't')).not.toContain('NaN');
});

test('a folder of good/ and bad/ photos gives worn-vs-usable only', () => {
  const r = evaluate([analysed('usable', null, 5, 0.6, [4, 6]), analysed('bad', null, 2, 0.6, [1, 3]), analysed('bad', null, 4, 0.6, [3, 5])]);
  expect(r.depth).toBeNull();
  expect(r.wear).toBeNull();
  expect(r.calibrationError).toBeNull();
  expect(r.meanConfidence).toBeNull();
  expect(r.wornVsUsable).toEqual({ n: 3, balancedAccuracy: 0.75, badRecall: 0.5, usableRecall: 1, allTires: { n: 3, balancedAccuracy: 0.75 } });
  expect(formatReport(r, 't')).not.toContain('without an answer');
  expect(formatReport(r, 't')).not.toContain('calibration error');
});

test('bootstrap intervals: seeded, ordered, around the figure, absent when not asked for', () => {
  // 60 tires whose estimates miss by 0.0, 0.1, …, 1.1 mm (repeating): MAE 0.55, within 1 mm 10 of 12
  const samples = Array.from({ length: 60 }, (_, i) => analysed('medium', 4.0, 4.0 + (i % 12) / 10, 0.6, [3.5, 5.5], 10));
  const plain = evaluate(samples);
  expect(plain.ci).toBeUndefined();
  const a = evaluate(samples, { bootstrap: 400, seed: 7 });
  const b = evaluate(samples, { bootstrap: 400, seed: 7 });
  expect(a.ci).toEqual(b.ci);
  const [lo, hi] = a.ci!.mae!;
  expect(lo).toBeLessThan(a.depth!.mae);
  expect(hi).toBeGreaterThan(a.depth!.mae);
  // the spread of a mean of 60 errors with sd ≈ 0.35 mm: about ± 0.09 mm
  expect(hi - lo).toBeGreaterThan(0.1);
  expect(hi - lo).toBeLessThan(0.3);
  expect(a.ci!.within1mm![0]).toBeLessThanOrEqual(a.ci!.within1mm![1]);
  // figures that cannot be computed here (no worn or usable pair) get no interval
  expect(a.ci!.wornVsUsable).toBeUndefined();
  expect(evaluate(samples, { bootstrap: 400, seed: 8 }).ci).not.toEqual(a.ci);
  expect(formatReport(a, 't')).toMatch(/^depth MAE {11}0\.55 mm over 60 {2}\(95 % CI 0\.\d\d–0\.\d\d\)$/m);
});

test('the percentile interval cuts as many draws off above as below', () => {
  const draws = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000); // 0..999, shuffled
  expect(centralInterval(draws, 0.95)).toEqual([25, 974]); // 950 values inside, 25 cut off each side
  expect(
    centralInterval(
      Array.from({ length: 200 }, (_, i) => 199 - i),
      0.9,
    ),
  ).toEqual([10, 189]);
  expect(centralInterval([3, 1, 2], 0.95)).toEqual([1, 3]); // too few to cut: the whole range
  expect(centralInterval([], 0.95).every(Number.isNaN)).toBe(true);
});

test('twiConsensusCount against the bars labels.csv counts (twiBars), over the tires answered that have a count', () => {
  const withBars = (s: Sample, reported: number, visible: number | undefined): Sample => {
    if ('analysis' in s.outcome) s.outcome.analysis.twiConsensusCount = reported;
    return visible === undefined ? s : { ...s, twiBars: visible };
  };
  const samples = [
    withBars(analysed('good', 6.0, 5.5, 0.9, [5, 6.5]), 4, 4), // exact
    withBars(analysed('worn', 2.0, 2.1, 0.9, [1, 3]), 3, 5), // 2 under
    withBars(analysed('critical', 1.0, 1.1, 0.9, [0.5, 2]), 0, 2), // a bar in sight, none reported
    withBars(analysed('medium', 4.0, 4.0, 0.9, [3, 5]), 1, 0), // one reported, none in sight
    withBars(analysed('new', 8.0, 8.0, 0.9, [7, 9]), 2, undefined), // not counted: left out
    { ...refused('worn'), twiBars: 6 }, // refused: no count to compare
  ];
  const r = evaluate(samples);
  expect(r.twi).not.toBeNull();
  const t = r.twi!;
  expect(t.n).toBe(4);
  expect(t.meanReported).toBeCloseTo(2, 10);
  expect(t.meanTrue).toBeCloseTo(11 / 4, 10);
  expect(t.exact).toBeCloseTo(1 / 4, 10);
  expect(t.withinOne).toBeCloseTo(2 / 4, 10); // 4 vs 4 and 1 vs 0
  // Pearson of (4, 3, 0, 1) and (4, 5, 2, 0): worked out by hand
  const a = [4, 3, 0, 1];
  const b = [4, 5, 2, 0];
  const ma = 2;
  const mb = 11 / 4;
  const cov = a.reduce((s, x, i) => s + (x - ma) * (b[i]! - mb), 0);
  const va = a.reduce((s, x) => s + (x - ma) ** 2, 0);
  const vb = b.reduce((s, x) => s + (x - mb) ** 2, 0);
  expect(t.correlation).toBeCloseTo(cov / Math.sqrt(va * vb), 10);
  expect(t.correlation).toBeGreaterThan(0.5);
  expect(t.anyWithBar).toBeCloseTo(2 / 3, 10);
  expect(t.withoutBar).toBe(1);
  expect(t.anyWithoutBar).toBe(1);
  const text = formatReport(r, 'test');
  expect(text).toContain('TWI bars            reported 2.0 vs 2.8 visible on average over 4; exact 25.0 %, within 1 50.0 %, correlation 0.');
  expect(text).toContain('above 0 in 66.7 % of photos with a bar in sight, 100.0 % of the 1 without one');
  // no twiBars column: no TWI figures
  expect(evaluate(samples.map(({ twiBars: _, ...s }) => s as Sample)).twi).toBeNull();
});

test('a tire whose tread the gate could not read counts as refused, like one it saw no tire in', () => {
  const notVisible = (truth: Truth): Sample => ({ file: `${truth}.jpg`, depthMm: null, truth, outcome: { error: 'TREAD_NOT_VISIBLE', ms: 5 } });
  const r = evaluate([notVisible('good'), refused('worn'), notVisible('notire'), { ...refused('new'), outcome: { error: 'IMAGE_UNREADABLE', ms: 5 } }]);
  expect(r.tiresRefused).toBeCloseTo(2 / 3, 10); // the unreadable file is no refusal of the gate
  expect(r.nonTiresRefused).toBe(1);
  expect(r.errors).toEqual({ TREAD_NOT_VISIBLE: 2, NO_TIRE_DETECTED: 1, IMAGE_UNREADABLE: 1 });
});
