/**
 * `npm run calibrate -- DIR --out MODELS_DIR [--models DIR]`: the shipped models calibrated on a
 * shop's own photos and gauge readings (src/core/analysis/shop-calibration.ts says what is fitted
 * and when it is kept). DIR is what `npm run collect` writes, or any folder `npm run eval` reads
 * with depths in labels.csv. Writes MODELS_DIR (the model files, byte for byte the base's, and a
 * manifest with the calibration folded in and a new version), which the server loads with
 * TIREWEAR_MODELS_DIR. Never writes over the shipped models or over a folder holding other models.
 *
 * Exit 0: written, or nothing worth changing (said so, nothing written); 1: models unavailable or
 * too few photos answered; 2: usage, labels or folder mistakes.
 */
import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxAnalyzer } from '../analysis/index.js';
import { analyzeLabelled } from '../analysis/eval-run.js';
import { readManifestJson, writeCalibratedModels } from '../analysis/calibration-files.js';
import { LabelsError, loadSamples, skippedLines, type LoadedSamples } from '../analysis/eval-samples.js';
import { fitShopCalibrationWithReader, formatFit, MIN_TIRES, pointFrom, type ShopPoint } from '../analysis/shop-calibration.js';
import { isAppError } from '../errors.js';
import { parseCli, usageError } from './args.js';

const DEFAULT_MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');
const USAGE = 'usage: npm run calibrate -- DIR --out MODELS_DIR [--models DIR]';
const usage = (problem: string): never => usageError('calibrate', USAGE, problem);
const fail = (code: number, message: string): never => {
  process.stderr.write(`calibrate: ${message}\n`);
  process.exit(code);
};

async function resolved(dir: string): Promise<string> {
  return realpath(dir).catch(() => path.resolve(dir));
}

async function main(): Promise<void> {
  const { values, positionals } = parseCli('calibrate', USAGE, { models: { type: 'string' }, out: { type: 'string' } });
  if (positionals.length !== 1) usage(positionals.length ? `one folder expected, got ${positionals.length}.` : 'which folder of labelled photos?');
  if (!values.out) usage('--out MODELS_DIR is required (where the calibrated models are written).');
  const dir = positionals[0]!;
  const modelsDir = values.models ?? DEFAULT_MODELS;
  const outDir = values.out!;

  // Everything that can be checked before the photos are read is checked first.
  let loaded: LoadedSamples;
  try {
    loaded = await loadSamples(dir);
  } catch (error) {
    if (!(error instanceof LabelsError)) throw error;
    return fail(2, error.message);
  }
  for (const line of skippedLines(loaded, dir)) process.stderr.write(`calibrate: ${line}\n`);
  const measured = loaded.samples.filter((s) => s.depthMm !== null);
  if (measured.length < MIN_TIRES) {
    fail(
      2,
      `${measured.length} photo(s) in ${dir} have a gauge reading (labels.csv depthMm); at least ${MIN_TIRES} are needed, and a few hundred give a steadier calibration.`,
    );
  }
  if ((await resolved(outDir)) === (await resolved(modelsDir)))
    fail(2, '--out must be another folder than the models it starts from (they are never written over).');
  const base = await readManifestJson(modelsDir);
  if (base?.shopCalibration !== undefined) {
    fail(
      2,
      `${modelsDir} already holds a shop calibration (${String(base.version)}); calibrate from the models it was made from (${JSON.stringify((base.shopCalibration as { base?: unknown }).base)}).`,
    );
  }
  const existing = await readManifestJson(outDir);
  if (existing !== null && existing.shopCalibration === undefined) {
    fail(2, `${outDir} holds other models (a manifest without a shop calibration); choose an empty or new folder.`);
  }

  const analyzer = await createOnnxAnalyzer({ modelsDir, threads: 2 }).catch((error: unknown) => {
    if (!isAppError(error)) throw error;
    return fail(1, `${error.code}: ${error.message}`);
  });
  process.stderr.write(`calibrate: reading ${measured.length} photos with ${analyzer.modelVersion}…\n`);
  const results = await analyzeLabelled(analyzer, measured, (line) => process.stderr.write(`calibrate: ${line}\n`), { features: true });
  await analyzer.close();
  const points: ShopPoint[] = [];
  const refused: Record<string, number> = {};
  for (const r of results) {
    if ('analysis' in r.outcome) points.push(pointFrom(r.depthMm!, r.outcome.analysis, r.outcome.features));
    else refused[r.outcome.error] = (refused[r.outcome.error] ?? 0) + 1;
  }
  if (Object.keys(refused).length)
    process.stderr.write(`calibrate: ${results.length - points.length} photo(s) got no answer and are left out: ${JSON.stringify(refused)}\n`);
  if (points.length < MIN_TIRES) fail(1, `only ${points.length} of ${results.length} photos got an answer; at least ${MIN_TIRES} are needed.`);

  const fitted = await fitShopCalibrationWithReader(points);
  process.stdout.write(formatFit(fitted));
  if (!fitted.depthApplied && !fitted.intervalApplied && !fitted.readerApplied) {
    process.stdout.write(`No calibration written: on these photos ${analyzer.modelVersion} needs no correction that cross-validation confirms.\n`);
    return;
  }
  const labels = await readFile(path.join(dir, 'labels.csv')).catch(() => null);
  const out = await writeCalibratedModels({
    baseDir: modelsDir,
    base: base ?? {},
    fit: fitted,
    outDir,
    created: new Date(),
    labelsSha256: labels ? createHash('sha256').update(labels).digest('hex') : null,
  }).catch((error: unknown) => fail(1, `writing the calibrated models to ${outDir} failed: ${isAppError(error) ? error.message : String(error)}`));
  process.stdout.write(
    `Wrote ${outDir}: model ${String(out.version)}.\n` +
      `Serve with it: TIREWEAR_MODELS_DIR=${outDir} npm run serve, or "modelsDir": ${JSON.stringify(path.resolve(outDir))} in the data folder's settings.json (the desktop app).\n` +
      `Measure it on photos it was not fitted on: npm run eval -- OTHER_DIR --models ${outDir}\n`,
  );
}

await main();
