/** The figures `npm run eval` prints, computed from per-image outcomes. */
import { WEAR_CLASSES, wearForDepth, type Analysis, type Wear } from './index.js';

export type Truth = Wear | 'notire' | 'usable' | 'bad';

export interface Sample {
  file: string;
  depthMm: number | null;
  truth: Truth;
  /** The TWI bars visible in the photo, when labels.csv counts them (`twiBars`). */
  twiBars?: number;
  /** `ms` is null when the file could not be read (nothing was analysed, so no time to count). */
  /** `features`: the scene network's, where they were asked for (analyzeLabelled) and the models give them. */
  outcome: { analysis: Analysis; ms: number; features?: Float32Array } | { error: string; ms: number | null };
}

/** Worn-vs-usable: "bad" means the reported wear is worn or critical (under 3.0 mm). */
export const isBad = (w: Wear): boolean => w === 'worn' || w === 'critical';

export interface Report {
  images: number;
  tires: number;
  nonTires: number;
  depth: { n: number; mae: number; within1mm: number } | null;
  /**
   * The depth error by the band of the true depth (docs/API.md §2 wear bands): where on the scale the
   * estimate is tight and where it is loose. `bias` is the mean of estimate − truth (negative:
   * reads shallower than the tire is).
   */
  depthByBand: { band: Wear; n: number; mae: number; within1mm: number; bias: number }[];
  /** Whether isPreliminary singles out the worse estimates. */
  /** maePreliminary / maeConfirmed: null when no result (or every result) is preliminary. */
  preliminary: { share: number; maePreliminary: number | null; maeConfirmed: number | null } | null;
  wear: { n: number; accuracy: number; balancedAccuracy: number; confusion: Record<string, Record<string, number>> } | null;
  /**
   * Over the tires that got an answer; `allTires` counts the tires that got none (refused by the
   * gate, unreadable) as wrong: on real photos the gate may refuse many, and the first figure alone
   * would then flatter the model.
   */
  wornVsUsable: { n: number; balancedAccuracy: number; badRecall: number; usableRecall: number; allTires: { n: number; balancedAccuracy: number } } | null;
  interval: { coverage: number } | null;
  calibrationError: number | null;
  /** Mean reported confidence beside the wear accuracy: which way a calibration error leans. */
  meanConfidence: number | null;
  tiresRefused: number | null;
  nonTiresRefused: number | null;
  /**
   * twiConsensusCount against the bars visible in the photo (labels.csv `twiBars`), over the tires
   * answered that have the count: means, exact and within-one shares, the correlation, and how
   * often the count is above 0 with and without a bar in sight.
   */
  twi: {
    n: number;
    meanReported: number;
    meanTrue: number;
    exact: number;
    withinOne: number;
    correlation: number;
    /** null when no photo had a bar in sight. */
    anyWithBar: number | null;
    withoutBar: number;
    anyWithoutBar: number;
  } | null;
  errors: Record<string, number>;
  msPerImage: { median: number; p95: number; mean: number };
  /**
   * 95 % bootstrap intervals (percentile, images resampled with replacement) of the headline
   * figures, when asked for: how far the figures could move on another set of the same size.
   */
  ci?: Partial<Record<CiFigure, [number, number]>>;
}

export type CiFigure = 'mae' | 'within1mm' | 'wearAccuracy' | 'wornVsUsable' | 'coverage' | 'calibrationError';

const CI_FIGURES: Record<CiFigure, (r: Report) => number | null | undefined> = {
  mae: (r) => r.depth?.mae,
  within1mm: (r) => r.depth?.within1mm,
  wearAccuracy: (r) => r.wear?.accuracy,
  wornVsUsable: (r) => r.wornVsUsable?.balancedAccuracy,
  coverage: (r) => r.interval?.coverage,
  calibrationError: (r) => r.calibrationError,
};

/** A small seeded generator (mulberry32), so the intervals printed for one folder never change. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const mean = (v: number[]): number => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN);
const meanOrNull = (v: number[]): number | null => (v.length ? mean(v) : null);
const quantile = (v: number[], q: number): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};

/**
 * The central `level` share of `v` (percentile bootstrap interval): as many values cut off below as
 * above, `floor(n * (1 - level) / 2)` each, so 1 000 draws at 0.95 give the 26th and the 975th
 * smallest (indices 25 and 974), the 950 values between them included.
 */
export function centralInterval(v: number[], level: number): [number, number] {
  const s = [...v].sort((a, b) => a - b);
  if (!s.length) return [NaN, NaN];
  const cut = Math.floor((s.length * (1 - level)) / 2 + 1e-9);
  return [s[cut]!, s[s.length - 1 - cut]!];
}

/** Pearson's correlation; NaN when either side does not vary. */
export function correlation(a: number[], b: number[]): number {
  const ma = mean(a);
  const mb = mean(b);
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  a.forEach((x, i) => {
    sab += (x - ma) * (b[i]! - mb);
    saa += (x - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  });
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : NaN;
}

function ece(conf: number[], correct: boolean[], bins = 10): number {
  let e = 0;
  for (let b = 0; b < bins; b++) {
    const idx = conf.map((c, i) => (c >= b / bins && (c < (b + 1) / bins || (b === bins - 1 && c <= 1)) ? i : -1)).filter((i) => i >= 0);
    if (!idx.length) continue;
    e += (idx.length / conf.length) * Math.abs(mean(idx.map((i) => conf[i]!)) - mean(idx.map((i) => (correct[i] ? 1 : 0))));
  }
  return e;
}

/**
 * The report over `samples`; with `bootstrap` > 0 also `ci`, from that many resamples of the
 * images (same size, with replacement, seeded so the printout is reproducible). A resample in
 * which a figure cannot be computed (say, no worn tire drawn) is left out of that figure's range.
 */
export function evaluate(samples: Sample[], options: { bootstrap?: number; seed?: number } = {}): Report {
  const report = measure(samples);
  const rounds = options.bootstrap ?? 0;
  if (rounds <= 0 || samples.length < 2) return report;
  const next = random(options.seed ?? 1);
  const draws = Object.fromEntries(Object.keys(CI_FIGURES).map((k) => [k, [] as number[]])) as Record<CiFigure, number[]>;
  for (let i = 0; i < rounds; i++) {
    const resample = samples.map(() => samples[Math.floor(next() * samples.length)]!);
    const r = measure(resample);
    for (const [k, figure] of Object.entries(CI_FIGURES) as [CiFigure, (r: Report) => number | null | undefined][]) {
      const v = figure(r);
      if (v != null && Number.isFinite(v)) draws[k].push(v);
    }
  }
  report.ci = {};
  for (const k of Object.keys(CI_FIGURES) as CiFigure[]) {
    if (CI_FIGURES[k](report) == null || draws[k].length < rounds / 2) continue;
    report.ci[k] = centralInterval(draws[k], 0.95);
  }
  return report;
}

function measure(samples: Sample[]): Report {
  const analysed = (s: Sample) => ('analysis' in s.outcome ? s.outcome.analysis : null);
  const tires = samples.filter((s) => s.truth !== 'notire');
  const nonTires = samples.filter((s) => s.truth === 'notire');
  const errors: Record<string, number> = {};
  for (const s of samples) if ('error' in s.outcome) errors[s.outcome.error] = (errors[s.outcome.error] ?? 0) + 1;

  const withDepth = tires.filter((s) => s.depthMm !== null && analysed(s));
  const signedErr = (s: Sample) => analysed(s)!.estimatedDepthMm - s.depthMm!;
  const absErr = withDepth.map((s) => Math.abs(signedErr(s)));
  const within1 = (e: number) => (e <= 1.0 + 1e-9 ? 1 : 0);
  const depthByBand = WEAR_CLASSES.flatMap((band) => {
    const inBand = withDepth.filter((s) => wearForDepth(s.depthMm!) === band);
    if (!inBand.length) return [];
    const errs = inBand.map(signedErr);
    return [{ band, n: inBand.length, mae: mean(errs.map(Math.abs)), within1mm: mean(errs.map((e) => within1(Math.abs(e)))), bias: mean(errs) }];
  });
  const covered = withDepth.map((s) => {
    const r = analysed(s)!.depthRangeMm;
    return s.depthMm! >= r.min && s.depthMm! <= r.max;
  });

  const fiveClass = tires.filter((s) => (WEAR_CLASSES as readonly string[]).includes(s.truth) && analysed(s));
  const confusion: Record<string, Record<string, number>> = {};
  for (const t of WEAR_CLASSES) confusion[t] = Object.fromEntries(WEAR_CLASSES.map((p) => [p, 0]));
  const correct = fiveClass.map((s) => {
    const p = analysed(s)!.wear;
    confusion[s.truth]![p]! += 1;
    return p === s.truth;
  });
  const present = WEAR_CLASSES.filter((c) => fiveClass.some((s) => s.truth === c));
  const recalls = present.map((c) => mean(fiveClass.filter((s) => s.truth === c).map((s) => (analysed(s)!.wear === c ? 1 : 0))));

  const truthBad = (s: Sample) => s.truth === 'bad' || (s.truth !== 'usable' && isBad(s.truth as Wear));
  // right: the answer's side of the 3.0 mm line matches the truth's; a tire without an answer is never right
  const sides = tires.map((s) => ({
    bad: truthBad(s),
    answered: analysed(s) !== null,
    right: analysed(s) !== null && isBad(analysed(s)!.wear) === truthBad(s),
  }));
  const balanced = (set: typeof sides) => {
    const bad = mean(set.filter((b) => b.bad).map((b) => (b.right ? 1 : 0)));
    const usable = mean(set.filter((b) => !b.bad).map((b) => (b.right ? 1 : 0)));
    return { balancedAccuracy: (bad + usable) / 2, badRecall: bad, usableRecall: usable };
  };
  const binary = sides.filter((b) => b.answered);
  const times = samples.flatMap((s) => (s.outcome.ms === null ? [] : [s.outcome.ms]));
  // either refusal of the gate: no tire, or a tire whose tread cannot be read
  const refused = (s: Sample) => 'error' in s.outcome && (s.outcome.error === 'NO_TIRE_DETECTED' || s.outcome.error === 'TREAD_NOT_VISIBLE');
  const counted = tires.filter((s) => s.twiBars !== undefined && analysed(s));
  const reported = counted.map((s) => analysed(s)!.twiConsensusCount);
  const visible = counted.map((s) => s.twiBars!);
  const noBar = visible.filter((v) => v === 0).length;

  return {
    images: samples.length,
    tires: tires.length,
    nonTires: nonTires.length,
    depth: withDepth.length ? { n: withDepth.length, mae: mean(absErr), within1mm: mean(absErr.map(within1)) } : null,
    depthByBand,
    preliminary: withDepth.length
      ? {
          share: mean(withDepth.map((s) => (analysed(s)!.isPreliminary ? 1 : 0))),
          maePreliminary: meanOrNull(withDepth.filter((s) => analysed(s)!.isPreliminary).map((s) => Math.abs(analysed(s)!.estimatedDepthMm - s.depthMm!))),
          maeConfirmed: meanOrNull(withDepth.filter((s) => !analysed(s)!.isPreliminary).map((s) => Math.abs(analysed(s)!.estimatedDepthMm - s.depthMm!))),
        }
      : null,
    wear: fiveClass.length ? { n: fiveClass.length, accuracy: mean(correct.map((c) => (c ? 1 : 0))), balancedAccuracy: mean(recalls), confusion } : null,
    wornVsUsable:
      binary.some((b) => b.bad) && binary.some((b) => !b.bad)
        ? { n: binary.length, ...balanced(binary), allTires: { n: sides.length, balancedAccuracy: balanced(sides).balancedAccuracy } }
        : null,
    interval: withDepth.length ? { coverage: mean(covered.map((c) => (c ? 1 : 0))) } : null,
    calibrationError: fiveClass.length
      ? ece(
          fiveClass.map((s) => analysed(s)!.confidence),
          correct,
        )
      : null,
    meanConfidence: fiveClass.length ? mean(fiveClass.map((s) => analysed(s)!.confidence)) : null,
    tiresRefused: tires.length ? mean(tires.map((s) => (refused(s) ? 1 : 0))) : null,
    nonTiresRefused: nonTires.length ? mean(nonTires.map((s) => (refused(s) ? 1 : 0))) : null,
    twi: counted.length
      ? {
          n: counted.length,
          meanReported: mean(reported),
          meanTrue: mean(visible),
          exact: mean(reported.map((r, i) => (r === visible[i] ? 1 : 0))),
          withinOne: mean(reported.map((r, i) => (Math.abs(r - visible[i]!) <= 1 ? 1 : 0))),
          correlation: correlation(reported, visible),
          anyWithBar: visible.some((v) => v > 0) ? mean(reported.filter((_, i) => visible[i]! > 0).map((r) => (r > 0 ? 1 : 0))) : null,
          withoutBar: noBar,
          anyWithoutBar: mean(reported.filter((_, i) => visible[i] === 0).map((r) => (r > 0 ? 1 : 0))),
        }
      : null,
    errors,
    msPerImage: { median: quantile(times, 0.5), p95: quantile(times, 0.95), mean: mean(times) },
  };
}
