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
  /** The mean of the shop's photos' standardised, held features (where `basis` is centred). */
  centre: number[];
  /**
   * The PRINCIPAL directions along which the shop's photos vary most (over the standardised, held
   * features; unit length and orthogonal as far as the power iteration converged, and the shop's
   * own spreads, which set typicalBelow, are measured off the very same vectors): a photo of the
   * same kind lies near the plane they span.
   */
  basis: number[][];
  /**
   * A photo whose spread (readPhoto: how far it lies off that plane) is above this is unlike the
   * shop's photos the reader learned from: 99 in 100 of those were at or under it. Its reading is
   * then preliminary, with the whole depth scale as its interval (scene.ts).
   */
  typicalBelow: number;
}

/** Standardised features are held within ±CLIP: a photo unlike the shop's cannot push the reading anywhere it likes. */
export const CLIP = 3;
/** The ridge penalties tried, per feature (λ = factor × feature count; the standardised features' K has a diagonal of about that count). */
export const LAMBDAS = [0.1, 0.3, 1];
/** Folds of the inner cross-validation that chooses λ. */
const INNER_FOLDS = 3;
/** A feature that does not vary over the shop's photos gets this spread: it then reads 0 (its mean) on every photo. */
const MIN_SCALE = 1e-3;

/** The share of the shop's photos the reader learned from whose spread is at or under typicalBelow. */
export const TYPICAL_SHARE = 0.99;
/**
 * How many principal directions of the shop's photos the spread is measured off. On michelin-twi
 * (readers fitted on four capture days): 10 directions flag 2.1 % of the fifth day's close-ups,
 * 64.5 % of web-good-defective's photos and 13.6 % of tyre-defect-ccby's; the features' own spread
 * flags 1.1 / 20.3 / 4.6 %, 50 directions 13.6 / 86.0 / 40.8 % (models/NOTEBOOK.md).
 */
export const PRINCIPAL = 10;
/** Rounds of the block power iteration that finds them (seeded: the same readings give the same reader). */
const POWER_ROUNDS = 30;

/**
 * The reader on one photo's features: its depth, mm (not clipped to the depth scale: the caller
 * does), and its spread, how far the photo lies off the plane of the shop's photos' main
 * directions: the squared length of the rest of its standardised, held features, per feature.
 */
export function readPhoto(reader: ShopReader, features: ArrayLike<number>): { depthMm: number; spread: number } {
  const { mean, scale, clip, weights, centre, basis } = reader;
  const d = weights.length;
  if (features.length !== d) throw new RangeError(`the reader takes ${d} features, the photo has ${features.length}`);
  let depth = reader.intercept;
  let length = 0;
  const zc = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    const z = (features[i]! - mean[i]!) / scale[i]!;
    const held = z > clip ? clip : z < -clip ? -clip : z;
    depth += weights[i]! * held;
    zc[i] = held - centre[i]!;
    length += zc[i]! ** 2;
  }
  for (const v of basis) {
    let along = 0;
    for (let i = 0; i < d; i++) along += zc[i]! * v[i]!;
    length -= along * along;
  }
  return { depthMm: depth, spread: Math.max(0, length) / d };
}

/** readPhoto's depth alone. */
export const readDepth = (reader: ShopReader, features: ArrayLike<number>): number => readPhoto(reader, features).depthMm;

/** Gives the event loop a turn: a fit of a few hundred photos takes seconds, and the server keeps answering meanwhile. */
const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Cholesky solve of (A + λI) x = b for symmetric positive definite A (n × n, row-major), in place
 * on a copy. Returns x.
 */
export async function ridgeSolve(a: Float64Array, n: number, lambda: number, b: Float64Array): Promise<Float64Array> {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    // a turn for the event loop every 128 rows (the factorisation of 1 500 photos is a second of work)
    if (i % 128 === 127) await breathe();
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
async function fitPredict(k: Float64Array, n: number, y: number[], train: number[], test: number[], lambda: number): Promise<number[]> {
  const m = train.length;
  const sub = new Float64Array(m * m);
  for (let a = 0; a < m; a++) for (let b = 0; b < m; b++) sub[a * m + b] = k[train[a]! * n + train[b]!]!;
  const ym = train.reduce((s, i) => s + y[i]!, 0) / m;
  const alpha = await ridgeSolve(
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
      (await fitPredict(k, n, y, inner, held, lambda)).forEach((p, i) => (err += Math.abs(p - y[held[i]!]!)));
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
    (await fitPredict(k, n, gaugeMm, train, test, lambda)).forEach((p, i) => (crossValidated[test[i]!] = p));
    await breathe();
  }
  const lambda = await chooseLambda(k, n, d, gaugeMm, all);
  const ym = gaugeMm.reduce((s, v) => s + v, 0) / n;
  const alpha = await ridgeSolve(
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
  const { centre, basis, spreads } = await principal(z, k, n, d);
  // (above 0 even for photos that are all alike, which then leave no spread at all)
  const typicalBelow = Math.max(1e-6, quantile(spreads, TYPICAL_SHARE));
  // seven significant digits (float32's) for the numbers the manifest carries: half the JSON, the same readings
  const short = (v: number[]) => v.map((x) => Number(x.toPrecision(7)));
  return {
    reader: {
      mean: short(mean),
      scale: short(scale),
      clip: CLIP,
      weights: short(weights),
      intercept,
      halfWidthMm,
      lambda,
      centre: short(centre),
      basis: basis.map(short),
      typicalBelow,
    },
    crossValidated,
    covered,
  };
}

/**
 * The shop's photos' PRINCIPAL main directions (unit vectors over the standardised, held
 * features z), their centre, and each photo's spread off them (readPhoto), from the Gram matrix
 * K = z zᵀ: centred, its leading eigenvectors u by a seeded block power iteration, the directions
 * zcᵀu / √λ, and each photo's spread (Kc_ii − Σ (Kc u)_i² / λ) / d, with no pass over the features
 * but the one that makes the directions.
 */
async function principal(z: Float64Array, k: Float64Array, n: number, d: number): Promise<{ centre: number[]; basis: number[][]; spreads: number[] }> {
  const centre = new Array<number>(d).fill(0);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) centre[j]! += z[i * d + j]! / n;
  const rowMean = new Float64Array(n);
  let total = 0;
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) rowMean[a]! += k[a * n + b]! / n;
    total += rowMean[a]! / n;
  }
  const kc = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) kc[a * n + b] = k[a * n + b]! - rowMean[a]! - rowMean[b]! + total;
  const m = Math.min(PRINCIPAL, n - 1);
  let seed = 12345;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  let u: Float64Array[] = Array.from({ length: m }, () => Float64Array.from({ length: n }, next));
  const times = (vec: Float64Array): Float64Array => {
    const out = new Float64Array(n);
    for (let a = 0; a < n; a++) {
      let sum = 0;
      for (let b = 0; b < n; b++) sum += kc[a * n + b]! * vec[b]!;
      out[a] = sum;
    }
    return out;
  };
  const orthonormal = (vs: Float64Array[]): Float64Array[] => {
    const out: Float64Array[] = [];
    for (const v of vs) {
      const w = Float64Array.from(v);
      for (const o of out) {
        let dot = 0;
        for (let a = 0; a < n; a++) dot += w[a]! * o[a]!;
        for (let a = 0; a < n; a++) w[a]! -= dot * o[a]!;
      }
      const norm = Math.sqrt(w.reduce((sum, x) => sum + x * x, 0));
      if (norm > 1e-12) out.push(w.map((x) => x / norm));
    }
    return out;
  };
  u = orthonormal(u);
  for (let round = 0; round < POWER_ROUNDS; round++) {
    u = orthonormal(u.map(times));
    await breathe();
  }
  const ku = u.map(times);
  const lambdas = u.map((v, c) => v.reduce((sum, x, a) => sum + x * ku[c]![a]!, 0));
  const kept = lambdas.map((l, c) => ({ l, c })).filter(({ l }) => l > 1e-9);
  const basis = kept.map(({ l, c }) => {
    const v = new Array<number>(d).fill(0);
    for (let a = 0; a < n; a++) {
      const w = u[c]![a]! / Math.sqrt(l);
      for (let j = 0; j < d; j++) v[j]! += w * (z[a * d + j]! - centre[j]!);
    }
    return v;
  });
  const spreads = Array.from({ length: n }, (_, a) => {
    let rest = kc[a * n + a]!;
    for (const { l, c } of kept) rest -= ku[c]![a]! ** 2 / l;
    return Math.max(0, rest) / d;
  });
  return { centre, basis, spreads };
}

const quantile80 = (v: number[]): number => quantile(v, 0.8);

/** numpy's default (linear) quantile (shop-calibration.ts uses it too). */
export function quantile(v: number[], q: number): number {
  const s = [...v].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (pos - lo);
}
