/**
 * A shop's own reader: the depth read from the scene network's features by a linear map fitted on
 * the shop's gauge readings (since tread-2026.11.29.4, whose scene graph gives its pooled features
 * as `features`, 3 296 numbers a photo). The networks stay as shipped; what is fitted is one ridge
 * regression on their features, which a few hundred readings can carry:
 *
 *   z = clamp((features − mean) / scale, −clip, clip),  depth = intercept + weights · z
 *
 * The shipped wear reading learned worn and usable from web photos and bald close-ups; it cannot
 * order close-ups of tread by depth (models/README.md, "michelin-twi read by how its wear was
 * made"). The features do hold that order: fitted on a shop's own close-ups and gauge readings they
 * read the shop's next photos in order (docs/CALIBRATION.md, "A shop's own reader", measured on
 * michelin-twi by capture day). shop-calibration.ts decides by cross-validation whether a shop's
 * readings are enough for it.
 *
 * The fit is ridge regression in its dual form (a photo count n of a few hundred against 3 296
 * features): α = (K + λI)⁻¹ (y − ȳ) with K = Z Zᵀ, weights = Zᵀ α. The features are standardised
 * once over all the shop's photos (their mean and spread, no gauge reading: the cross-validation
 * below reads the held-out photos' features, never their readings), and λ is chosen among
 * LAMBDAS × the feature count by an inner cross-validation on the training photos alone.
 */
/** What the manifest carries (calibration.scene.shopReader). */
export interface ShopReader {
  mean: number[];
  scale: number[];
  clip: number;
  weights: number[];
  intercept: number;
  /** Four cross-validated readings in five were within this many mm of the gauge: the 80 % interval's half-width. */
  halfWidthMm: number;
  /** The ridge penalty chosen (for the record). */
  lambda: number;
}

/** Standardised features are held within ±CLIP: a photo unlike the shop's cannot push the reading anywhere it likes. */
export const CLIP = 3;
/** The ridge penalties tried, per feature (λ = factor × feature count; the standardised features' K has a diagonal of about that count). */
export const LAMBDAS = [0.1, 0.3, 1];
/** Folds of the inner cross-validation that chooses λ. */
const INNER_FOLDS = 3;
/** A feature that does not vary over the shop's photos gets this spread: it then reads 0 (its mean) on every photo. */
const MIN_SCALE = 1e-3;

/** The reader's depth for one photo's features, mm (not clipped to the depth scale: the caller does). */
export function readDepth(reader: ShopReader, features: ArrayLike<number>): number {
  const { mean, scale, clip, weights } = reader;
  if (features.length !== weights.length) throw new RangeError(`the reader takes ${weights.length} features, the photo has ${features.length}`);
  let depth = reader.intercept;
  for (let i = 0; i < weights.length; i++) {
    const z = (features[i]! - mean[i]!) / scale[i]!;
    depth += weights[i]! * (z > clip ? clip : z < -clip ? -clip : z);
  }
  return depth;
}

/** Gives the event loop a turn: a fit of a few hundred photos takes seconds, and the server keeps answering meanwhile. */
const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Cholesky solve of (A + λI) x = b for symmetric positive definite A (n × n, row-major), in place
 * on a copy. Returns x.
 */
export function ridgeSolve(a: Float64Array, n: number, lambda: number, b: Float64Array): Float64Array {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * n + j]! + (i === j ? lambda : 0);
      for (let k = 0; k < j; k++) s -= l[i * n + k]! * l[j * n + k]!;
      if (i === j) {
        if (!(s > 0)) throw new RangeError('the system is not positive definite');
        l[i * n + i] = Math.sqrt(s);
      } else l[i * n + j] = s / l[j * n + j]!;
    }
  }
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[i * n + k]! * y[k]!;
    y[i] = s / l[i * n + i]!;
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k * n + i]! * x[k]!;
    x[i] = s / l[i * n + i]!;
  }
  return x;
}

/** The photos' standardised, clipped features (row-major n × d) and the standardisation. */
function standardise(features: ArrayLike<number>[]): { z: Float64Array; mean: number[]; scale: number[] } {
  const n = features.length;
  const d = features[0]!.length;
  const mean = new Array<number>(d).fill(0);
  const scale = new Array<number>(d).fill(0);
  for (const f of features) for (let j = 0; j < d; j++) mean[j]! += f[j]! / n;
  for (const f of features) for (let j = 0; j < d; j++) scale[j]! += (f[j]! - mean[j]!) ** 2 / n;
  for (let j = 0; j < d; j++) scale[j] = Math.sqrt(scale[j]!) + MIN_SCALE;
  const z = new Float64Array(n * d);
  features.forEach((f, i) => {
    for (let j = 0; j < d; j++) {
      const v = (f[j]! - mean[j]!) / scale[j]!;
      z[i * d + j] = v > CLIP ? CLIP : v < -CLIP ? -CLIP : v;
    }
  });
  return { z, mean, scale };
}

/** K = Z Zᵀ (n × n), a few rows at a time with a turn for the event loop in between. */
async function gram(z: Float64Array, n: number, d: number): Promise<Float64Array> {
  const k = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = 0;
      for (let t = 0, a = i * d, b = j * d; t < d; t++) s += z[a + t]! * z[b + t]!;
      k[i * n + j] = s;
      k[j * n + i] = s;
    }
    if (i % 32 === 31) await breathe();
  }
  return k;
}

/**
 * The fold of photo i of n: consecutive blocks, so that photos taken one after another (a car's four
 * tires, the same tire twice) fall in one fold and a reader is never judged on a near copy of a
 * photo it learned from.
 */
export const blockOf = (i: number, n: number, folds: number): number => Math.floor((i * folds) / n);

/** Ridge on the photos `train` (indices into K), predicting the photos `test`. */
function fitPredict(k: Float64Array, n: number, y: number[], train: number[], test: number[], lambda: number): number[] {
  const m = train.length;
  const sub = new Float64Array(m * m);
  for (let a = 0; a < m; a++) for (let b = 0; b < m; b++) sub[a * m + b] = k[train[a]! * n + train[b]!]!;
  const ym = train.reduce((s, i) => s + y[i]!, 0) / m;
  const alpha = ridgeSolve(
    sub,
    m,
    lambda,
    Float64Array.from(train, (i) => y[i]! - ym),
  );
  return test.map((t) => {
    let s = ym;
    for (let a = 0; a < m; a++) s += alpha[a]! * k[t * n + train[a]!]!;
    return s;
  });
}

/** λ for the photos `train`: the one of LAMBDAS × d with the least mean absolute error over an inner cross-validation. */
async function chooseLambda(k: Float64Array, n: number, d: number, y: number[], train: number[]): Promise<number> {
  let best = { lambda: LAMBDAS[0]! * d, mae: Infinity };
  for (const factor of LAMBDAS) {
    const lambda = factor * d;
    let err = 0;
    for (let f = 0; f < INNER_FOLDS; f++) {
      const inner = train.filter((_, i) => blockOf(i, train.length, INNER_FOLDS) !== f);
      const held = train.filter((_, i) => blockOf(i, train.length, INNER_FOLDS) === f);
      fitPredict(k, n, y, inner, held, lambda).forEach((p, i) => (err += Math.abs(p - y[held[i]!]!)));
      await breathe();
    }
    if (err / train.length < best.mae) best = { lambda, mae: err / train.length };
  }
  return best.lambda;
}

export interface ReaderFit {
  reader: ShopReader;
  /** Each photo's depth as read by a reader fitted without its fold (blockOf). */
  crossValidated: number[];
  /** Whether each photo's cross-validated reading was within the half-width the other folds' readings give (the interval's coverage). */
  covered: boolean[];
}

/**
 * Fits the reader on all the photos, and reads each photo with one fitted without its fold
 * (blockOf: photos in the order they were taken) for the decision and the interval's width.
 */
export async function fitReader(features: ArrayLike<number>[], gaugeMm: number[], folds: number): Promise<ReaderFit> {
  const n = features.length;
  if (n < 2 * folds || gaugeMm.length !== n) throw new RangeError(`a reader needs at least ${2 * folds} photos with features, one reading each`);
  const d = features[0]!.length;
  if (!d || features.some((f) => f.length !== d)) throw new RangeError('every photo needs the same number of features');
  const { z, mean, scale } = standardise(features);
  const k = await gram(z, n, d);
  const all = Array.from({ length: n }, (_, i) => i);
  const crossValidated = new Array<number>(n).fill(0);
  for (let f = 0; f < folds; f++) {
    const train = all.filter((i) => blockOf(i, n, folds) !== f);
    const test = all.filter((i) => blockOf(i, n, folds) === f);
    const lambda = await chooseLambda(k, n, d, gaugeMm, train);
    fitPredict(k, n, gaugeMm, train, test, lambda).forEach((p, i) => (crossValidated[test[i]!] = p));
    await breathe();
  }
  const lambda = await chooseLambda(k, n, d, gaugeMm, all);
  const ym = gaugeMm.reduce((s, v) => s + v, 0) / n;
  const alpha = ridgeSolve(
    k,
    n,
    lambda,
    Float64Array.from(gaugeMm, (v) => v - ym),
  );
  const weights = new Array<number>(d).fill(0);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) weights[j]! += alpha[i]! * z[i * d + j]!;
  const intercept = ym;
  const residuals = crossValidated.map((p, i) => Math.abs(gaugeMm[i]! - Math.max(0, p)));
  const halfWidthMm = Math.max(0.1, quantile80(residuals));
  // each fold's coverage with the half-width of the other folds' residuals: the 80 % is not read off the residuals it was set by
  const widths = Array.from({ length: folds }, (_, f) => Math.max(0.1, quantile80(residuals.filter((_, j) => blockOf(j, n, folds) !== f))));
  const covered = residuals.map((r, i) => r <= widths[blockOf(i, n, folds)]! + 1e-9);
  return { reader: { mean, scale, clip: CLIP, weights, intercept, halfWidthMm, lambda }, crossValidated, covered };
}

/** numpy's default (linear) 80th percentile. */
function quantile80(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const pos = 0.8 * (s.length - 1);
  const lo = Math.floor(pos);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (pos - lo);
}
