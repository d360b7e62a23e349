/**
 * `npm run eval -- DIR [--models DIR] [--json]`: accuracy of the shipped models on a labelled folder.
 *
 * DIR holds either labels.csv (file,depthMm[,wear]; wear may be "notire", and is the band of
 * depthMm when absent) or class folders: new/ good/ medium/ worn/ critical/, notire/, or the
 * binary pair usable/ (alias good/ when no five-class folders exist) and bad/ (= worn or critical).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxAnalyzer, wearForDepth, WEAR_CLASSES, type Wear } from '../analysis/index.js';
import { isAppError } from '../errors.js';
import { evaluate, formatReport, type Sample } from '../analysis/eval-metrics.js';
import { inspectImage } from '../images/inspect.js';

const IMAGE = /\.(jpe?g|png|webp)$/i;
const DEFAULT_MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');

async function fromCsv(dir: string): Promise<Omit<Sample, 'outcome'>[]> {
  const lines = (await readFile(path.join(dir, 'labels.csv'), 'utf8')).split(/\r?\n/).filter((l) => l.trim());
  const header = lines[0]!.split(',').map((h) => h.trim());
  const col = (name: string) => header.indexOf(name);
  return lines.slice(1).map((line) => {
    const cells = line.split(',').map((c) => c.trim());
    const depthText = cells[col('depthMm')] ?? '';
    const depthMm = depthText === '' ? null : Number(depthText);
    const wearText = col('wear') >= 0 ? (cells[col('wear')] ?? '') : '';
    const truth = wearText === 'notire' ? 'notire' : wearText ? (wearText as Wear) : depthMm !== null ? wearForDepth(depthMm) : 'notire';
    return { file: path.join(dir, cells[col('file')]!), depthMm, truth };
  });
}

async function fromFolders(dir: string): Promise<Omit<Sample, 'outcome'>[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name);
  const fiveClass = folders.some((f) => f !== 'good' && (WEAR_CLASSES as readonly string[]).includes(f));
  const out: Omit<Sample, 'outcome'>[] = [];
  for (const folder of folders) {
    let truth: Sample['truth'];
    if (folder === 'notire') truth = 'notire';
    else if (folder === 'bad') truth = 'bad';
    else if (folder === 'usable' || (folder === 'good' && !fiveClass)) truth = 'usable';
    else if ((WEAR_CLASSES as readonly string[]).includes(folder)) truth = folder as Wear;
    else continue;
    for (const name of (await readdir(path.join(dir, folder))).sort()) {
      if (IMAGE.test(name)) out.push({ file: path.join(dir, folder, name), depthMm: null, truth });
    }
  }
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const modelsAt = args.indexOf('--models');
  const modelsDir = modelsAt >= 0 ? args[modelsAt + 1]! : DEFAULT_MODELS;
  const dir = args.find((a, i) => !a.startsWith('--') && (modelsAt < 0 || i !== modelsAt + 1));
  if (!dir) {
    process.stderr.write('usage: eval DIR [--models DIR] [--json]\n');
    process.exit(2);
  }
  const entries = await readdir(dir);
  const samples = entries.includes('labels.csv') ? await fromCsv(dir) : await fromFolders(dir);
  const analyzer = await createOnnxAnalyzer({ modelsDir, threads: 2 });
  const results: Sample[] = [];
  for (const s of samples) {
    const image = await readFile(s.file);
    const started = process.hrtime.bigint();
    try {
      // The service's path: upload checks, one decode to the frame, the analysis on that frame.
      const { frame } = await inspectImage(image);
      const { analysis } = await analyzer.analyze({ image, verbose: false, frame });
      results.push({ ...s, outcome: { analysis, ms: Number(process.hrtime.bigint() - started) / 1e6 } });
    } catch (error) {
      if (!isAppError(error)) throw error;
      results.push({ ...s, outcome: { error: error.code, ms: Number(process.hrtime.bigint() - started) / 1e6 } });
    }
  }
  await analyzer.close();
  const report = evaluate(results);
  process.stdout.write(args.includes('--json') ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, analyzer.modelVersion));
}

await main();
