/**
 * `npm run eval -- DIR [--models DIR] [--bootstrap N] [--json]`: accuracy of the shipped models on a
 * labelled folder, with 95 % bootstrap intervals of the headline figures (N resamples, default
 * 1000; 0 leaves them out).
 *
 * DIR holds either labels.csv (file,depthMm[,wear]; wear may be "notire", and is the band of
 * depthMm when absent) or class folders: new/ good/ medium/ worn/ critical/, notire/, or the
 * binary pair usable/ (alias good/ when no five-class folders exist) and bad/ (= worn or critical).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxAnalyzer } from '../analysis/index.js';
import { isAppError } from '../errors.js';
import { evaluate, formatReport } from '../analysis/eval-metrics.js';
import { analyzeLabelled } from '../analysis/eval-run.js';
import { LabelsError, loadSamples, skippedLines, type LoadedSamples } from '../analysis/eval-samples.js';
import { parseCli, usageError } from './args.js';

const DEFAULT_MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');
const USAGE = 'usage: npm run eval -- DIR [--models DIR] [--bootstrap N] [--json]';
const DEFAULT_BOOTSTRAP = 1000;

function usage(problem: string): never {
  return usageError('eval', USAGE, problem);
}

async function main(): Promise<void> {
  const { values, positionals } = parseCli('eval', USAGE, { models: { type: 'string' }, bootstrap: { type: 'string' }, json: { type: 'boolean' } });
  if (positionals.length !== 1) usage(positionals.length ? `one folder expected, got ${positionals.length}.` : 'which folder?');
  const bootstrap = values.bootstrap === undefined ? DEFAULT_BOOTSTRAP : Number(values.bootstrap);
  if (!/^\d+$/.test(values.bootstrap ?? '0') || bootstrap > 100_000) usage('--bootstrap takes a whole number of resamples, 0 to 100000.');
  const dir = positionals[0]!;
  const modelsDir = values.models ?? DEFAULT_MODELS;
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
  const analyzer = await createOnnxAnalyzer({ modelsDir, threads: 2 }).catch((error: unknown) => {
    if (!isAppError(error)) throw error;
    process.stderr.write(`eval: ${error.code}: ${error.message}\n`);
    process.exit(1);
  });
  const results = await analyzeLabelled(analyzer, samples, (line) => process.stderr.write(`eval: ${line}\n`));
  await analyzer.close();
  const report = evaluate(results, { bootstrap });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, analyzer.modelVersion));
  if (!values.json && report.ci && Object.keys(report.ci).length) {
    process.stdout.write(`95 % CI: percentile bootstrap, ${bootstrap} resamples of the ${report.images} images\n`);
  }
}

await main();
