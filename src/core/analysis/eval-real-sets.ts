/**
 * The real photo sets of ../shared/realdata as `npm run eval -- --real` reads them (eval-real.ts
 * has what each label means), and each photo sent through the service's own path.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { MAX_IMAGE_BYTES } from '../../shared/contract/limits.js';
import { isAppError } from '../errors.js';
import { inspectImage, MIN_SHORT_SIDE } from '../images/inspect.js';
import type { Analysis, Analyzer } from './analyzer.js';
import { csvCells, IMAGE_FILE } from './eval-samples.js';

/** What a real photo is known to show. */
export type RealTruth = 'usable' | 'bad' | 'between' | 'tread' | 'vehicle' | 'notire';

export interface RealSample {
  file: string;
  truth: RealTruth;
  /** michelin-twi's share of the wear gauge still standing. */
  pct?: number;
  /** How the wear was made (michelin-twi's `wearMadeBy`: new, road-worn by a van, planed). */
  madeBy?: string;
  /** michelin-twi's `fold`: one capture day each (photos of one day share tires). */
  fold?: number;
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
  /** The scene network's features, where they were asked for (analyzeReal's `features`) and the models give them. */
  features?: Float32Array;
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

/**
 * michelin-twi's `wearMadeBy`, in words: its 0–75 % tires were planed, not worn on the road, and a
 * planed surface looks rougher than road wear (realdata/README.md), so the evaluation reads each kind
 * apart: a model that learned "rough = worn" reads the planed tires shallower than the road-worn ones
 * of about the same depth.
 */
export const WEAR_MADE_BY: Record<string, string> = { aucune: 'new', camionnette: 'road-worn', raboteuse: 'planed' };

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
    const madeAt = head.indexOf('wearMadeBy');
    const foldAt = head.indexOf('fold');
    if (fileAt < 0 || pctAt < 0) throw new Error(`${mich}: needs the columns file and twiRemainingPct`);
    const samples = lines.slice(1).map((l): RealSample => {
      const cells = csvCells(l);
      const pct = Number(cells[pctAt]);
      const made = madeAt >= 0 ? cells[madeAt]?.trim() : undefined;
      const fold = foldAt >= 0 ? Number(cells[foldAt]) : NaN;
      return {
        file: path.join(path.dirname(mich), cells[fileAt]!),
        pct,
        truth: pct <= 25 ? 'bad' : pct >= 75 ? 'usable' : 'between',
        ...(made ? { madeBy: WEAR_MADE_BY[made] ?? made } : {}),
        ...(Number.isInteger(fold) ? { fold } : {}),
      };
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
export async function analyzeReal(
  analyzer: Analyzer,
  samples: RealSample[],
  onEach?: (done: number) => void,
  options: { features?: boolean } = {},
): Promise<RealOutcome[]> {
  const out: RealOutcome[] = [];
  for (const sample of samples) {
    const size = (await stat(sample.file).catch(() => null))?.size ?? 0;
    if (size > MAX_IMAGE_BYTES) {
      out.push({ sample, analysis: null, error: 'FILE_TOO_LARGE' });
      continue;
    }
    let upscaled = false;
    try {
      const sent = await upload(sample);
      upscaled = sent.upscaled;
      const { frame } = await inspectImage(sent.bytes);
      const { analysis, features } = await analyzer.analyze({ image: sent.bytes, verbose: false, frame, features: options.features === true });
      out.push({ sample, upscaled, analysis, error: null, ...(features ? { features } : {}) });
    } catch (error) {
      // an image sharp cannot open is what the service answers IMAGE_UNREADABLE for
      out.push({ sample, upscaled, analysis: null, error: isAppError(error) ? error.code : 'IMAGE_UNREADABLE' });
    }
    onEach?.(out.length);
  }
  return out;
}
