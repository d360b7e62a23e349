/**
 * How the estimate moves with the size of the photo: the same scenes rendered at several sizes
 * (`make_dataset.py --split heldout --photo-scale K`, one folder per size, same seeds), each photo
 * read as the service reads it (`inspectImage`, then `analyze`), bias and MAE per true-depth band
 * over the tires answered at every size.
 *
 *   npx tsx scripts/eval-sizes.ts [--models DIR] DIR_1X DIR_3X DIR_5.6X ...
 *
 * The "Large photos" tables of the model's notebook (models/NOTEBOOK.md) come from it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createOnnxAnalyzer } from '../src/core/analysis/index.js';
import { inspectImage } from '../src/core/images/inspect.js';

const USAGE = 'usage: npx tsx scripts/eval-sizes.ts [--models DIR] DIR DIR [DIR ...]  (held-out folders of the same seeds at different sizes)';
let values: { models?: string };
let dirs: string[];
try {
  ({ values, positionals: dirs } = parseArgs({ options: { models: { type: 'string' } }, allowPositionals: true }));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}
if (dirs.length < 2 || dirs.some((d) => !existsSync(path.join(d, 'labels.csv')))) {
  process.stderr.write(`give at least two folders, each with a labels.csv\n${USAGE}\n`);
  process.exit(2);
}

/** file → depth (mm) of the labelled tires in a folder's labels.csv. */
function depths(dir: string): Map<string, number> {
  const rows = readFileSync(path.join(dir, 'labels.csv'), 'utf8').trim().split('\n').slice(1);
  return new Map(
    rows
      .map((l) => l.split(','))
      .filter((r) => r[1])
      .map((r) => [r[0]!, Number(r[1])]),
  );
}

const labels = dirs.map(depths);
// a scene counts when every size has it with the same depth (a size may have dropped a render)
const files = [...labels[0]!.keys()].filter((f) => labels.every((m) => m.get(f) === labels[0]!.get(f)));
const BANDS: [string, number, number][] = [
  ['critical', 0, 1.6],
  ['worn', 1.6, 3],
  ['medium', 3, 5],
  ['good', 5, 7],
  ['new', 7, Infinity],
];
const errors = new Map(BANDS.map(([b]) => [b, dirs.map(() => [] as number[])]));
const analyzer = await createOnnxAnalyzer({ modelsDir: values.models ?? path.resolve(import.meta.dirname, '../models'), threads: 2 });
let answered = 0;
for (const file of files) {
  const truth = labels[0]!.get(file)!;
  const estimates: number[] = [];
  for (const dir of dirs) {
    const image = readFileSync(path.join(dir, file));
    try {
      const { frame } = await inspectImage(image);
      estimates.push((await analyzer.analyze({ image, verbose: false, frame })).analysis.estimatedDepthMm);
    } catch {
      break; // refused at this size: the scene is left out at every size
    }
  }
  if (estimates.length !== dirs.length) continue;
  answered++;
  const band = BANDS.find(([, lo, hi]) => truth >= lo && truth < hi)![0];
  estimates.forEach((e, i) => errors.get(band)![i]!.push(e - truth));
}
await analyzer.close();

const mean = (v: number[]): number => v.reduce((s, x) => s + x, 0) / v.length;
const cell = (e: number[]): string => (e.length ? `bias ${mean(e).toFixed(2).padStart(6)} MAE ${mean(e.map(Math.abs)).toFixed(2)}` : 'none');
console.log(`${answered} of ${files.length} tires answered at every size: ${dirs.map((d) => path.basename(d)).join(' | ')}`);
const all = dirs.map(() => [] as number[]);
for (const [band] of BANDS) {
  const row = errors.get(band)!;
  row.forEach((e, i) => all[i]!.push(...e));
  console.log(band.padEnd(9), `n ${row[0]!.length}`.padEnd(6), row.map(cell).join(' | '));
}
console.log('all'.padEnd(9), `n ${all[0]!.length}`.padEnd(6), all.map(cell).join(' | '));
