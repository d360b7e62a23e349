/**
 * `npm run eval -- --real DIR`: the shipped models on the real photo sets of ../shared/realdata,
 * read as they are (realdata/README.md), each set scored by a model that never learned from it
 * where one is given (`--loso`), and the figures issue 40 asks for, set by set.
 *
 * - michelin-twi/labels.csv: `twiRemainingPct` (100 new … 0 worn to the indicator): 0–25 worn,
 *   75–100 usable, 50 between (in the order only); the Spearman correlation of the depth with it.
 * - web-good-defective/{good,defective}/: usable / not usable.
 * - tyre-defect-ccby/{train,valid,test}/images/: real tread and sidewall close-ups: a tire to read.
 * - vehicles-wheels/images/: whole vehicles (a tire whose tread cannot be read), and from each photo
 *   up to two quarters that touch no wheel box: hard negatives (car bodies, roads, yards).
 * - `--negatives DIR`: any folder of photos without a tire (hard negatives too).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { isAppError } from '../errors.js';
import { inspectImage, MAX_UPLOAD_BYTES, MIN_SHORT_SIDE } from '../images/inspect.js';
import type { Analysis, Analyzer } from './analyzer.js';
import { centralInterval, correlation, isBad, random } from './eval-metrics.js';
import { csvCells, IMAGE_FILE } from './eval-samples.js';

/** What a real photo is known to show. */
export type RealTruth = 'usable' | 'bad' | 'between' | 'tread' | 'vehicle' | 'notire';

export interface RealSample {
  file: string;
  truth: RealTruth;
  /** michelin-twi's share of the wear gauge still standing. */
  pct?: number;
  /** A part of the photo (fractions of the upright photo: left, top, right, bottom) measured instead of the whole. */
  box?: [number, number, number, number];
}

export interface RealSet {
  name: string;
  samples: RealSample[];
}

export interface RealOutcome {
  sample: RealSample;
  /** Enlarged to the service's minimum size before it was sent. */
  upscaled?: boolean;
  analysis: Analysis | null;
  error: string | null;
}

async function images(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => IMAGE_FILE.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

function yoloBoxes(text: string): [number, number, number, number][] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter((v) => v.length >= 5 && v.every(Number.isFinite))
    .map(([, x, y, w, h]) => [x! - w! / 2, y! - h! / 2, x! + w! / 2, y! + h! / 2]);
}

const QUARTERS: [number, number, number, number][] = [
  [0, 0, 0.5, 0.5],
  [0.5, 0, 1, 0.5],
  [0, 0.5, 0.5, 1],
  [0.5, 0.5, 1, 1],
];

/** The quarters of a photo that touch none of its wheel boxes (each widened by 10 %), at most two. */
export function quartersWithoutWheels(boxes: [number, number, number, number][]): [number, number, number, number][] {
  const grown = boxes.map(([a, b, c, d]) => [a - 0.1 * (c - a), b - 0.1 * (d - b), c + 0.1 * (c - a), d + 0.1 * (d - b)] as const);
  const touches = (q: readonly number[], g: readonly number[]) => q[0]! < g[2]! && g[0]! < q[2]! && q[1]! < g[3]! && g[1]! < q[3]!;
  return QUARTERS.filter((q) => !grown.some((g) => touches(q, g))).slice(0, 2);
}

/** The sets found under `root` (a set that is not there is left out, not an error). */
export async function loadRealSets(root: string, negatives?: string): Promise<RealSet[]> {
  const sets: RealSet[] = [];
  const web = path.join(root, 'web-good-defective');
  if (await exists(web)) {
    const good = (await images(path.join(web, 'good'))).map((file) => ({ file, truth: 'usable' as const }));
    const bad = (await images(path.join(web, 'defective'))).map((file) => ({ file, truth: 'bad' as const }));
    sets.push({ name: 'web-good-defective', samples: [...good, ...bad] });
  }
  const mich = path.join(root, 'michelin-twi', 'labels.csv');
  if (await exists(mich)) {
    const lines = (await readFile(mich, 'utf8')).split(/\r?\n/).filter((l) => l.trim());
    const head = csvCells(lines[0]!);
    const fileAt = head.indexOf('file');
    const pctAt = head.indexOf('twiRemainingPct');
    if (fileAt < 0 || pctAt < 0) throw new Error(`${mich}: needs the columns file and twiRemainingPct`);
    const samples = lines.slice(1).map((l): RealSample => {
      const cells = csvCells(l);
      const pct = Number(cells[pctAt]);
      return { file: path.join(path.dirname(mich), cells[fileAt]!), pct, truth: pct <= 25 ? 'bad' : pct >= 75 ? 'usable' : 'between' };
    });
    sets.push({ name: 'michelin-twi', samples });
  }
  const ccby = path.join(root, 'tyre-defect-ccby');
  if (await exists(ccby)) {
    const samples: RealSample[] = [];
    for (const split of ['train', 'valid', 'test'])
      samples.push(...(await images(path.join(ccby, split, 'images'))).map((file) => ({ file, truth: 'tread' as const })));
    sets.push({ name: 'tyre-defect-ccby', samples });
  }
  const veh = path.join(root, 'vehicles-wheels');
  if (await exists(veh)) {
    const samples: RealSample[] = [];
    const negs: RealSample[] = [];
    for (const split of (await readdir(path.join(veh, 'images')).catch(() => [] as string[])).sort()) {
      for (const file of await images(path.join(veh, 'images', split))) {
        samples.push({ file, truth: 'vehicle' });
        const label = path.join(veh, 'labels', split, `${path.basename(file).replace(/\.[^.]+$/, '')}.txt`);
        const boxes = yoloBoxes(await readFile(label, 'utf8').catch(() => ''));
        for (const box of quartersWithoutWheels(boxes)) negs.push({ file, truth: 'notire', box });
      }
    }
    sets.push({ name: 'vehicles-wheels', samples }, { name: 'vehicles-wheels-outside', samples: negs });
  }
  if (negatives)
    sets.push({ name: `negatives:${path.basename(negatives)}`, samples: (await images(negatives)).map((file) => ({ file, truth: 'notire' as const })) });
  return sets;
}

/**
 * The bytes the service would be sent: the file, or its box cut out (upright) as a JPEG. A photo
 * (or cut) under the service's minimum short side (docs/API.md §2: 256 px; every web-good-defective photo is
 * 200 × 200) is enlarged to it first, so that the model is measured rather than the size rule;
 * `upscaled` says so.
 */
async function upload(s: RealSample): Promise<{ bytes: Buffer; upscaled: boolean }> {
  let bytes = await readFile(s.file);
  const meta = await sharp(bytes).metadata();
  const swap = (meta.orientation ?? 1) >= 5;
  const W = (swap ? meta.height : meta.width) ?? 0;
  const H = (swap ? meta.width : meta.height) ?? 0;
  let cut = { left: 0, top: 0, width: W, height: H };
  if (s.box) {
    const [l, t, r, b] = s.box;
    const left = Math.floor(l * W);
    const top = Math.floor(t * H);
    cut = { left, top, width: Math.max(16, Math.min(W - left, Math.round((r - l) * W))), height: Math.max(16, Math.min(H - top, Math.round((b - t) * H))) };
  }
  const small = Math.min(cut.width, cut.height) < MIN_SHORT_SIDE;
  if (!s.box && !small) return { bytes, upscaled: false };
  let img = sharp(bytes).rotate();
  if (s.box) img = sharp(await img.extract(cut).png().toBuffer());
  if (small) {
    const k = MIN_SHORT_SIDE / Math.min(cut.width, cut.height);
    img = img.resize(Math.ceil(cut.width * k), Math.ceil(cut.height * k), { kernel: 'lanczos3' });
  }
  bytes = await img.jpeg({ quality: 92 }).toBuffer();
  return { bytes, upscaled: small };
}

/** Every sample through the service's own path (upload checks, one decode, the analysis). */
export async function analyzeReal(analyzer: Analyzer, samples: RealSample[], onEach?: (done: number) => void): Promise<RealOutcome[]> {
  const out: RealOutcome[] = [];
  for (const sample of samples) {
    const size = (await stat(sample.file).catch(() => null))?.size ?? 0;
    if (size > MAX_UPLOAD_BYTES) {
      out.push({ sample, analysis: null, error: 'FILE_TOO_LARGE' });
      continue;
    }
    let upscaled = false;
    try {
      const sent = await upload(sample);
      upscaled = sent.upscaled;
      const { frame } = await inspectImage(sent.bytes);
      out.push({ sample, upscaled, analysis: (await analyzer.analyze({ image: sent.bytes, verbose: false, frame })).analysis, error: null });
    } catch (error) {
      // an image sharp cannot open is what the service answers IMAGE_UNREADABLE for
      out.push({ sample, upscaled, analysis: null, error: isAppError(error) ? error.code : 'IMAGE_UNREADABLE' });
    }
    onEach?.(out.length);
  }
  return out;
}

/** Spearman's rank correlation (average ranks for ties); NaN when either side does not vary. */
export function spearman(a: number[], b: number[]): number {
  const ranks = (v: number[]) => {
    const order = v.map((x, i) => [x, i] as const).sort((p, q) => p[0] - q[0]);
    const r = new Array<number>(v.length);
    for (let i = 0; i < order.length;) {
      let j = i;
      while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
      for (let k = i; k <= j; k++) r[order[k]![1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  return correlation(ranks(a), ranks(b));
}

export interface RealFigures {
  set: string;
  /** "held out": scored by a model that never learned from this set; "trained on": in-sample. */
  scoredBy: 'held out' | 'trained on';
  modelVersion: string;
  n: number;
  answered: number;
  refusedNoTire: number;
  refusedNotVisible: number;
  otherErrors: Record<string, number>;
  /** Worn vs usable over the answered photos with a side, and its 95 % bootstrap interval. */
  wornVsUsable: { n: number; balancedAccuracy: number; ci: [number, number]; badRecall: number; usableRecall: number } | null;
  /** Worn tires (all of them, answered or not) answered usable with confidence ≥ 0.8. */
  dangerous: { n: number; share: number } | null;
  spearman: { n: number; rho: number; ci: [number, number] } | null;
  /**
   * Confidence against whether the answer's side of 3.0 mm is right (the most a worn/usable label
   * can check of a band): mean confidence, side accuracy, and the 10-bin ECE between them.
   */
  confidence: { n: number; mean: number; sideAccuracy: number; ece: number } | null;
  preliminaryShare: number | null;
  /** Photos enlarged to the service's minimum size before they were sent. */
  upscaled: number;
}

function balanced(items: { bad: boolean; saidBad: boolean }[]) {
  const rec = (want: boolean) => {
    const g = items.filter((i) => i.bad === want);
    return g.length ? g.filter((i) => i.saidBad === want).length / g.length : NaN;
  };
  const badRecall = rec(true);
  const usableRecall = rec(false);
  return { balancedAccuracy: (badRecall + usableRecall) / 2, badRecall, usableRecall };
}

function bootstrap(n: number, rounds: number, figure: (pick: number[]) => number): [number, number] {
  const next = random(1);
  const draws: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const v = figure(Array.from({ length: n }, () => Math.floor(next() * n)));
    if (Number.isFinite(v)) draws.push(v);
  }
  return draws.length ? centralInterval(draws, 0.95) : [NaN, NaN];
}

export function realFigures(
  set: string,
  outcomes: RealOutcome[],
  meta: { scoredBy: RealFigures['scoredBy']; modelVersion: string; bootstrap: number },
): RealFigures {
  const answered = outcomes.filter((o) => o.analysis);
  const count = (code: string) => outcomes.filter((o) => o.error === code).length;
  const otherErrors: Record<string, number> = {};
  for (const o of outcomes)
    if (o.error && o.error !== 'NO_TIRE_DETECTED' && o.error !== 'TREAD_NOT_VISIBLE') otherErrors[o.error] = (otherErrors[o.error] ?? 0) + 1;
  const sided = answered
    .filter((o) => o.sample.truth === 'bad' || o.sample.truth === 'usable')
    .map((o) => ({ bad: o.sample.truth === 'bad', saidBad: isBad(o.analysis!.wear), confidence: o.analysis!.confidence }));
  const hasBoth = sided.some((s) => s.bad) && sided.some((s) => !s.bad);
  const worn = outcomes.filter((o) => o.sample.truth === 'bad');
  const ordered = answered.filter((o) => o.sample.pct !== undefined);
  const rho = (pick: number[]) =>
    spearman(
      pick.map((i) => ordered[i]!.analysis!.estimatedDepthMm),
      pick.map((i) => ordered[i]!.sample.pct!),
    );
  const bins = 10;
  let ece = 0;
  for (let b = 0; b < bins; b++) {
    const inBin = sided.filter((s) => s.confidence >= b / bins && (s.confidence < (b + 1) / bins || (b === bins - 1 && s.confidence <= 1)));
    if (!inBin.length) continue;
    const conf = inBin.reduce((t, s) => t + s.confidence, 0) / inBin.length;
    const acc = inBin.filter((s) => s.bad === s.saidBad).length / inBin.length;
    ece += (inBin.length / sided.length) * Math.abs(conf - acc);
  }
  return {
    set,
    scoredBy: meta.scoredBy,
    modelVersion: meta.modelVersion,
    n: outcomes.length,
    answered: answered.length,
    refusedNoTire: count('NO_TIRE_DETECTED'),
    refusedNotVisible: count('TREAD_NOT_VISIBLE'),
    otherErrors,
    wornVsUsable: hasBoth
      ? { n: sided.length, ...balanced(sided), ci: bootstrap(sided.length, meta.bootstrap, (pick) => balanced(pick.map((i) => sided[i]!)).balancedAccuracy) }
      : null,
    dangerous: worn.length
      ? { n: worn.length, share: worn.filter((o) => o.analysis && !isBad(o.analysis.wear) && o.analysis.confidence >= 0.8).length / worn.length }
      : null,
    spearman: ordered.length > 2 ? { n: ordered.length, rho: rho(ordered.map((_, i) => i)), ci: bootstrap(ordered.length, meta.bootstrap, rho) } : null,
    confidence: sided.length
      ? {
          n: sided.length,
          mean: sided.reduce((t, s) => t + s.confidence, 0) / sided.length,
          sideAccuracy: sided.filter((s) => s.bad === s.saidBad).length / sided.length,
          ece,
        }
      : null,
    preliminaryShare: answered.length ? answered.filter((o) => o.analysis!.isPreliminary).length / answered.length : null,
    upscaled: outcomes.filter((o) => o.upscaled).length,
  };
}

const pct = (v: number) => `${(100 * v).toFixed(1)} %`;
const f3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');

/** The real-photo table, as the model card carries it (Markdown). */
export function formatRealTable(rows: RealFigures[]): string {
  const head =
    '| set | scored by | photos | answered | refused: no tire | refused: tread not visible | worn vs usable (95 % CI) | dangerous | Spearman (95 % CI) | confidence vs side right (ECE) | preliminary |';
  const lines = [head, `|${' --- |'.repeat(11)}`];
  for (const r of rows) {
    const wvu = r.wornVsUsable ? `${f3(r.wornVsUsable.balancedAccuracy)} (${f3(r.wornVsUsable.ci[0])}–${f3(r.wornVsUsable.ci[1])}), n ${r.wornVsUsable.n}` : '';
    const dang = r.dangerous ? `${pct(r.dangerous.share)} of ${r.dangerous.n}` : '';
    const sp = r.spearman ? `${f3(r.spearman.rho)} (${f3(r.spearman.ci[0])}–${f3(r.spearman.ci[1])})` : '';
    const conf = r.confidence ? `${pct(r.confidence.mean)} vs ${pct(r.confidence.sideAccuracy)} (${f3(r.confidence.ece)})` : '';
    const other = Object.keys(r.otherErrors).length ? ` + ${JSON.stringify(r.otherErrors)}` : '';
    lines.push(
      `| ${r.set}${r.upscaled ? ` (${r.upscaled} enlarged to 256 px)` : ''} | ${r.scoredBy} (${r.modelVersion}) | ${r.n} | ${pct(r.answered / r.n)}${other} | ${pct(r.refusedNoTire / r.n)} | ${pct(r.refusedNotVisible / r.n)} | ${wvu} | ${dang} | ${sp} | ${conf} | ${r.preliminaryShare === null ? '' : pct(r.preliminaryShare)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
