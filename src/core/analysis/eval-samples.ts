/**
 * What `npm run eval` measures on: the labelled images of a folder, read from its labels.csv or
 * from class subfolders. Everything a person labelling photos by hand can get wrong (a misspelt
 * class, a depth in the wrong unit, a class that contradicts the depth, a file that is not there,
 * a folder the tool does not know) is reported by line or name before any image is analysed, so a
 * figure is never computed on a silently different set of photos.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { MAX_TREAD_DEPTH_MM, wearForDepth, WEAR_CLASSES, type Wear } from './analyzer.js';
import type { Sample, Truth } from './eval-metrics.js';

export type Labelled = Omit<Sample, 'outcome'>;

export interface LoadedSamples {
  samples: Labelled[];
  /** Folders skipped because their name is no class (folder layout only). */
  ignored: string[];
  /** Images in the folder that labels.csv does not list (labels.csv layout only). */
  unlisted: number;
  /**
   * Files and folders inside the class folders, or beside them, that are not measured, each with
   * why (folder layout only): a photo in a subfolder, a file that is no JPEG, PNG or WebP (an
   * iPhone's HEIC), a photo outside any class folder.
   */
  notMeasured: string[];
}

/** Problems in the labels, one line each; thrown together. */
export class LabelsError extends Error {
  constructor(readonly problems: string[]) {
    super(
      problems.length === 1
        ? problems[0]
        : `${problems.length} problems in the labels:\n  ${problems.slice(0, 20).join('\n  ')}${problems.length > 20 ? `\n  … and ${problems.length - 20} more` : ''}`,
    );
    this.name = 'LabelsError';
  }
}

export const IMAGE_FILE = /\.(jpe?g|png|webp)$/i;

const TRUTHS: Record<string, Truth> = {
  ...Object.fromEntries(WEAR_CLASSES.map((w) => [w, w])),
  notire: 'notire',
  'no-tire': 'notire',
  usable: 'usable',
  bad: 'bad',
};

/** The binary truth a wear band counts as (eval-metrics isBad: worn or critical, under 3.0 mm). */
const sideOf = (w: Wear): 'usable' | 'bad' => (w === 'worn' || w === 'critical' ? 'bad' : 'usable');

/** One CSV line split on commas; double quotes may wrap a cell (`""` is a quote inside one). */
export function csvCells(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  out.push(cell.trim());
  return out;
}

/**
 * labels.csv: a header naming `file` and `depthMm` and/or `wear` (any order, any case), then one
 * row per image. `depthMm` is the gauge reading of the shallowest main groove in millimetres
 * (empty for a photo without a tire); `wear` is one of new, good, medium, worn, critical, notire,
 * or the binary usable / bad, defaults to the band of `depthMm`, and must agree with that band
 * when both are given (usable: new, good or medium; bad: worn or critical; at a band's edge, either
 * side within the rounding of the depth written). An optional `twiBars` column gives the tread wear
 * indicator bars visible in the photo (a whole number; empty: not counted), for the
 * twiConsensusCount figures. Blank lines and lines starting with `#` are skipped.
 */
export function parseLabelsCsv(text: string, dir: string): Labelled[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l, i) => ({ n: i + 1, l }))
    .filter(({ l }) => l.trim() && !l.trim().startsWith('#'));
  if (!lines.length) throw new LabelsError(['labels.csv is empty: expected a header "file,depthMm,wear" and one row per image.']);
  const header = csvCells(lines[0]!.l).map((h) => h.toLowerCase());
  const col = { file: header.indexOf('file'), depth: header.indexOf('depthmm'), wear: header.indexOf('wear'), twi: header.indexOf('twibars') };
  if (col.file < 0 || (col.depth < 0 && col.wear < 0)) {
    throw new LabelsError([`labels.csv line ${lines[0]!.n}: the header must name "file" and "depthMm" and/or "wear" (found "${lines[0]!.l.trim()}").`]);
  }
  const problems: string[] = [];
  const samples: Labelled[] = [];
  const seen = new Set<string>();
  for (const { n, l } of lines.slice(1)) {
    const row = csvCells(l);
    const file = row[col.file] ?? '';
    const depthText = col.depth >= 0 ? (row[col.depth] ?? '') : '';
    const wearText = col.wear >= 0 ? (row[col.wear] ?? '').toLowerCase() : '';
    const at = `labels.csv line ${n}`;
    if (!file) {
      problems.push(`${at}: no file name.`);
      continue;
    }
    if (path.isAbsolute(file) || file.split(/[\\/]/).includes('..')) {
      problems.push(`${at}: "${file}" must be a path inside the folder.`);
      continue;
    }
    // a.jpg, ./a.jpg and sub//a.jpg name one file (the same file under another name, through a
    // link, is caught once the files are found: loadSamples)
    const key = path.normalize(file);
    if (seen.has(key)) problems.push(`${at}: "${file}" is listed twice.`);
    seen.add(key);
    let depthMm: number | null = null;
    if (depthText !== '') {
      const plain = depthText.replace(/\s*mm$/i, '');
      // a decimal number only: Number() alone would read 0x5 as 5 mm and 1e1 as 10
      const d = /^(\d+(\.\d*)?|\.\d+)$/.test(plain) ? Number(plain) : NaN;
      if (!Number.isFinite(d) || d < 0 || d > MAX_TREAD_DEPTH_MM) {
        problems.push(`${at}: depthMm "${depthText}" is not a tread depth in millimetres (0–${MAX_TREAD_DEPTH_MM}).`);
        continue;
      }
      depthMm = d;
    }
    let truth: Truth;
    if (wearText) {
      const t = TRUTHS[wearText];
      if (!t) {
        problems.push(`${at}: wear "${row[col.wear]}" is not one of ${Object.keys(TRUTHS).join(', ')}.`);
        continue;
      }
      truth = t;
    } else if (depthMm !== null) truth = wearForDepth(depthMm);
    else {
      problems.push(`${at}: neither a depth nor a wear class for "${file}" (write notire for a photo without a tire).`);
      continue;
    }
    if (truth === 'notire' && depthMm !== null) {
      problems.push(`${at}: "${file}" is labelled notire but has a depth.`);
      continue;
    }
    if (depthMm !== null && truth !== 'notire') {
      // The depth feeds the depth error, the class the confusion matrix and worn-vs-usable: they must
      // agree. A depth is written rounded (make_dataset.py: 7.00 for a 6.996 mm "good"), so the class
      // of any depth that rounds to it will do: half a unit of the last digit written, at most 0.05 mm.
      const decimals = depthText.replace(/\s*mm$/i, '').split('.')[1]?.length ?? 0;
      const slack = Math.min(0.05, 0.5 * 10 ** -decimals);
      const fits = (w: Wear) => w === truth || sideOf(w) === truth;
      if (!fits(wearForDepth(depthMm - slack)) && !fits(wearForDepth(depthMm + slack))) {
        const band = wearForDepth(depthMm);
        const side = truth === 'usable' || truth === 'bad' ? `, which counts as ${sideOf(band)}` : '';
        problems.push(`${at}: "${file}" is labelled ${truth} but its depthMm "${depthText}" is in the ${band} band${side}.`);
        continue;
      }
    }
    const twiText = col.twi >= 0 ? (row[col.twi] ?? '') : '';
    let twiBars: number | null = null;
    if (twiText !== '') {
      const b = /^\d{1,3}$/.test(twiText) ? Number(twiText) : NaN; // digits only: no 0x10, 1e1 or 4.0
      if (!(b >= 0 && b <= 100)) {
        problems.push(`${at}: twiBars "${twiText}" is not a count of bars (a whole number from 0 to 100).`);
        continue;
      }
      twiBars = b;
    }
    samples.push({ file: path.join(dir, file), depthMm, truth, ...(twiBars === null ? {} : { twiBars }) });
  }
  if (problems.length) throw new LabelsError(problems);
  return samples;
}

/** Class subfolders: new/ good/ medium/ worn/ critical/, notire/, or the binary usable/ (alias good/ when no other five-class folder exists) and bad/. */
async function fromFolders(dir: string): Promise<LoadedSamples> {
  const entries = await readdir(dir, { withFileTypes: true });
  const notMeasured: string[] = [];
  const folders: string[] = [];
  for (const e of entries) {
    // a class folder may be a link to a folder elsewhere (stat follows it)
    const isFolder = e.isDirectory() || (e.isSymbolicLink() && Boolean((await stat(path.join(dir, e.name)).catch(() => null))?.isDirectory()));
    if (isFolder) folders.push(e.name);
    else if (IMAGE_FILE.test(e.name)) notMeasured.push(`${e.name} (a photo outside the class folders)`);
  }
  folders.sort();
  const fiveClass = folders.some((f) => f !== 'good' && (WEAR_CLASSES as readonly string[]).includes(f));
  const samples: Labelled[] = [];
  const ignored: string[] = [];
  for (const folder of folders) {
    let truth: Truth;
    if (folder === 'notire') truth = 'notire';
    else if (folder === 'bad') truth = 'bad';
    else if (folder === 'usable' || (folder === 'good' && !fiveClass)) truth = 'usable';
    else if ((WEAR_CLASSES as readonly string[]).includes(folder)) truth = folder as Wear;
    else {
      ignored.push(folder);
      continue;
    }
    for (const name of (await readdir(path.join(dir, folder))).sort()) {
      const file = path.join(dir, folder, name);
      const info = await stat(file).catch(() => null);
      if (info?.isDirectory()) notMeasured.push(`${folder}/${name}/ (a folder inside a class folder: photos must lie directly in it)`);
      else if (!IMAGE_FILE.test(name)) {
        if (!name.startsWith('.')) notMeasured.push(`${folder}/${name} (not a .jpg, .jpeg, .png or .webp file)`);
      } else if (info?.isFile()) samples.push({ file, depthMm: null, truth });
      else notMeasured.push(`${folder}/${name} (not a readable file)`);
    }
  }
  return { samples, ignored, unlisted: 0, notMeasured };
}

/** What in `dir` is not measured, one line each, for the command to print before it starts. */
export function skippedLines(loaded: LoadedSamples, dir: string): string[] {
  const lines: string[] = [];
  if (loaded.ignored.length) lines.push(`ignoring folders that name no class: ${loaded.ignored.join(', ')}`);
  if (loaded.unlisted) lines.push(`${loaded.unlisted} image(s) in ${dir} are not in labels.csv and are not measured`);
  if (loaded.notMeasured.length) {
    const shown = loaded.notMeasured
      .slice(0, 10)
      .map((n) => `\n  ${n}`)
      .join('');
    const more = loaded.notMeasured.length > 10 ? `\n  … and ${loaded.notMeasured.length - 10} more` : '';
    lines.push(`not measured, ${loaded.notMeasured.length} in ${dir}:${shown}${more}`);
  }
  return lines;
}

/**
 * One photo under two names (`./a.jpg` and `a.jpg`, a link beside its target, one photo linked into
 * two class folders) would count twice in every figure, or as two truths at once: one line each.
 */
async function sameFiles(samples: Labelled[], dir: string, fromLabels: boolean): Promise<string[]> {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const s of samples) {
    const name = path.relative(dir, s.file);
    const real = await realpath(s.file).catch(() => path.resolve(s.file));
    const first = seen.get(real);
    if (first === undefined) seen.set(real, name);
    else
      problems.push(
        fromLabels
          ? `labels.csv lists ${first} and ${name}, which are the same file.`
          : `${first} and ${name} are the same file: one photo must be in one class folder, once.`,
      );
  }
  return problems;
}

/** The labelled images of `dir`; throws LabelsError naming every problem (including files listed but missing). */
export async function loadSamples(dir: string): Promise<LoadedSamples> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new LabelsError([`${dir} is not a folder.`]);
  const entries = await readdir(dir, { withFileTypes: true });
  let loaded: LoadedSamples;
  const fromLabels = entries.some((e) => e.name === 'labels.csv');
  if (fromLabels) {
    const labelsFile = path.join(dir, 'labels.csv');
    const text = await readFile(labelsFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new LabelsError([`${labelsFile} cannot be read (${error.code ?? error.message}): it must be a text file.`]);
    });
    const samples = parseLabelsCsv(text, dir);
    const listed = new Set(samples.map((s) => path.resolve(s.file)));
    const images = entries.filter((e) => IMAGE_FILE.test(e.name) && !e.isDirectory() && !listed.has(path.resolve(dir, e.name)));
    loaded = { samples, ignored: [], unlisted: images.length, notMeasured: [] };
    const absent: string[] = [];
    for (const s of samples) {
      if (!(await stat(s.file).catch(() => null))?.isFile()) absent.push(`labels.csv lists ${path.relative(dir, s.file)}, which is not a file in ${dir}.`);
    }
    if (absent.length) throw new LabelsError(absent);
  } else {
    loaded = await fromFolders(dir);
  }
  const same = await sameFiles(loaded.samples, dir, fromLabels);
  if (same.length) throw new LabelsError(same);
  if (!loaded.samples.length) {
    throw new LabelsError([
      `No labelled images in ${dir}: expected labels.csv (file,depthMm,wear) or class folders (new, good, medium, worn, critical, notire, or usable and bad)${loaded.ignored.length ? `; found only ${loaded.ignored.join(', ')}` : ''}.`,
    ]);
  }
  return loaded;
}
