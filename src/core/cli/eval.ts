/**
 * `npm run eval -- DIR [--models DIR] [--bootstrap N] [--json]`: accuracy of the shipped models on a
 * labelled folder, with 95 % bootstrap intervals of the headline figures (N resamples, default
 * 1000; 0 leaves them out).
 *
 * `npm run eval -- --real REALDATA [--loso DIR] [--negatives DIR] [--limit N] [--json]`: the real-photo
 * table (analysis/eval-real.ts), set by set. With `--loso`, a set with a folder of its own name
 * there (a model trained without it: models/training/train_real.sh writes them) is scored by that
 * model; every row says whether its model learned from the set ("trained on") or not ("held out").
 *
 * DIR holds either labels.csv (file,depthMm[,wear]; wear may be "notire", and is the band of
 * depthMm when absent) or class folders: new/ good/ medium/ worn/ critical/, notire/, or the
 * binary pair usable/ (alias good/ when no five-class folders exist) and bad/ (= worn or critical).
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxAnalyzer } from '../analysis/index.js';
import { isAppError } from '../errors.js';
import { evaluate } from '../analysis/eval-metrics.js';
import { formatRealTable, formatReport } from '../analysis/eval-format.js';
import { analyzeLabelled } from '../analysis/eval-run.js';
import { LabelsError, loadSamples, skippedLines, type LoadedSamples } from '../analysis/eval-samples.js';
import { parseCli, usageError } from './args.js';
import { loadManifest } from '../analysis/manifest.js';
import { analyzeReal, loadRealSets, realFigures, type RealFigures } from '../analysis/eval-real.js';

const DEFAULT_MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');
const USAGE =
  'usage: npm run eval -- DIR [--models DIR] [--bootstrap N] [--json]\n       npm run eval -- --real REALDATA [--models DIR] [--loso DIR] [--negatives DIR] [--limit N] [--per-photo FILE] [--bootstrap N] [--json]';
const DEFAULT_BOOTSTRAP = 1000;

function usage(problem: string): never {
  return usageError('eval', USAGE, problem);
}

async function loadAnalyzer(modelsDir: string) {
  return createOnnxAnalyzer({ modelsDir, threads: 2 }).catch((error: unknown) => {
    if (!isAppError(error)) throw error;
    process.stderr.write(`eval: ${error.code}: ${error.message}\n`);
    process.exit(1);
  });
}

/** The set a model must not have learned from to score `set` (the vehicles' outside crops are that set's photos). */
const sourceOf = (set: string): string => (set === 'vehicles-wheels-outside' ? 'vehicles-wheels' : set);

async function real(
  root: string,
  opts: { modelsDir: string; loso?: string; negatives?: string; limit: number; bootstrap: number; json: boolean; perPhoto?: string },
): Promise<void> {
  const sets = await loadRealSets(root, opts.negatives);
  if (!sets.length) {
    process.stderr.write(`eval: no real photo set found in ${root} (expected web-good-defective/, michelin-twi/, tyre-defect-ccby/ or vehicles-wheels/)\n`);
    process.exit(2);
  }
  const rows: RealFigures[] = [];
  const photos: string[] = ['set,file,box,truth,pct,error,estimatedDepthMm,confidence,isPreliminary,modelAlignment,preliminaryReasons'];
  for (const set of sets) {
    const own = opts.loso ? path.join(opts.loso, sourceOf(set.name)) : null;
    const modelsDir = own && existsSync(path.join(own, 'manifest.json')) ? own : opts.modelsDir;
    const manifest = await loadManifest(modelsDir);
    const step = opts.limit > 0 ? Math.max(1, Math.ceil(set.samples.length / opts.limit)) : 1;
    const samples = set.samples.filter((_, i) => i % step === 0);
    const analyzer = await loadAnalyzer(modelsDir);
    process.stderr.write(`eval: ${set.name}: ${samples.length} photos, models ${modelsDir}\n`);
    const outcomes = await analyzeReal(analyzer, samples, (done) => {
      if (done % 200 === 0) process.stderr.write(`eval:   ${done}/${samples.length}\n`);
    });
    await analyzer.close();
    for (const o of outcomes) {
      const a = o.analysis;
      const cells = [
        set.name,
        o.sample.file,
        o.sample.box?.join(' ') ?? '',
        o.sample.truth,
        o.sample.pct ?? '',
        o.error ?? '',
        a?.estimatedDepthMm ?? '',
        a?.confidence ?? '',
        a?.isPreliminary ?? '',
        a?.modelAlignment ?? '',
        a?.preliminaryReasons?.join(' ') ?? '',
      ];
      photos.push(cells.map((c) => (/[",\n]/.test(String(c)) ? `"${String(c).replace(/"/g, '""')}"` : String(c))).join(','));
    }
    const scoredBy = manifest.trainedOn.includes(sourceOf(set.name)) ? 'trained on' : 'held out';
    rows.push(realFigures(set.name, outcomes, { scoredBy, modelVersion: manifest.version, bootstrap: opts.bootstrap }));
  }
  if (opts.perPhoto) writeFileSync(opts.perPhoto, `${photos.join('\n')}\n`);
  process.stdout.write(opts.json ? `${JSON.stringify(rows, null, 2)}\n` : formatRealTable(rows));
}

async function main(): Promise<void> {
  const { values, positionals } = parseCli('eval', USAGE, {
    models: { type: 'string' },
    bootstrap: { type: 'string' },
    json: { type: 'boolean' },
    real: { type: 'string' },
    loso: { type: 'string' },
    negatives: { type: 'string' },
    limit: { type: 'string' },
    'per-photo': { type: 'string' },
  });
  const bootstrap = values.bootstrap === undefined ? DEFAULT_BOOTSTRAP : Number(values.bootstrap);
  if (!/^\d+$/.test(values.bootstrap ?? '0') || bootstrap > 100_000) usage('--bootstrap takes a whole number of resamples, 0 to 100000.');
  const modelsDir = values.models ?? DEFAULT_MODELS;
  if (values.real !== undefined) {
    if (positionals.length) usage('--real takes the realdata folder; no other folder is expected.');
    if (values.limit !== undefined && !/^\d+$/.test(values.limit)) usage('--limit takes a whole number of photos per set.');
    const limit = Number(values.limit ?? 0);
    return real(values.real, {
      modelsDir,
      ...(values.loso ? { loso: values.loso } : {}),
      ...(values.negatives ? { negatives: values.negatives } : {}),
      limit,
      bootstrap,
      json: values.json ?? false,
      ...(values['per-photo'] ? { perPhoto: values['per-photo'] } : {}),
    });
  }
  for (const flag of ['loso', 'negatives', 'limit', 'per-photo'] as const) if (values[flag] !== undefined) usage(`--${flag} goes with --real.`);
  if (positionals.length !== 1) usage(positionals.length ? `one folder expected, got ${positionals.length}.` : 'which folder?');
  const dir = positionals[0]!;
  let loaded: LoadedSamples;
  try {
    loaded = await loadSamples(dir);
  } catch (error) {
    if (!(error instanceof LabelsError)) throw error;
    process.stderr.write(`eval: ${error.message}\n`);
    process.exit(2);
  }
  const { samples } = loaded;
  for (const line of skippedLines(loaded, dir)) process.stderr.write(`eval: ${line}\n`);
  const analyzer = await loadAnalyzer(modelsDir);
  const results = await analyzeLabelled(analyzer, samples, (line) => process.stderr.write(`eval: ${line}\n`));
  await analyzer.close();
  const report = evaluate(results, { bootstrap });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, analyzer.modelVersion));
  if (!values.json && report.ci && Object.keys(report.ci).length) {
    process.stdout.write(`95 % CI: percentile bootstrap, ${bootstrap} resamples of the ${report.images} images\n`);
  }
}

await main();
