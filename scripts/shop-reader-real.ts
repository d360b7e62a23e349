/**
 * What a shop's own reader (src/core/analysis/shop-reader.ts) reaches on real close-ups of tread:
 * michelin-twi's photos play a shop's scans with gauge readings, one capture day at a time held out.
 *
 *   npx tsx scripts/shop-reader-real.ts ../shared/realdata [--models DIR] [--sizes 50,100,200,400] [--repeats 3]
 *
 * For each capture day (labels.csv `fold`; photos of one day share tires) the calibration a shop
 * would run (shop-calibration.ts fitShopCalibrationWithReader: the line, or the reader where its
 * cross-validation finds it better) is fitted on the other days' photos and reads the held-out
 * day's. The gauge reading stands in as realdata/README.md reads the label: 1.6 + pct/100 × (7.5 −
 * 1.6) mm, an approximation, so the figures that matter are by rank (Spearman) and by the ends (0–25
 * worn vs 75–100 usable). Then the learning curve: readers fitted on n photos drawn from the other
 * days (no decision, the reader itself), `--repeats` draws each.
 *
 * Measuring only: michelin-twi may not train shipped weights (realdata/README.md), and nothing
 * fitted here is written anywhere.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createOnnxAnalyzer } from '../src/core/analysis/index.js';
import { analyzeReal, loadRealSets, spearman, type RealOutcome } from '../src/core/analysis/eval-real.js';
import { random } from '../src/core/analysis/eval-metrics.js';
import { fitShopCalibrationWithReader, median, pointFrom, type ShopFit, type ShopPoint } from '../src/core/analysis/shop-calibration.js';
import { fitReader, readDepth, readPhoto } from '../src/core/analysis/shop-reader.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { MAX_TREAD_DEPTH_MM, type Analysis } from '../src/core/analysis/analyzer.js';
import { readManifestJson, writeCalibratedModels } from '../src/core/analysis/calibration-files.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { models: { type: 'string' }, sizes: { type: 'string', default: '50,100,200,400' }, repeats: { type: 'string', default: '3' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: npx tsx scripts/shop-reader-real.ts REALDATA [--models DIR] [--sizes 50,100,200,400] [--repeats 3]\n');
  process.exit(2);
}
const modelsDir = values.models ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../models');
const sizes = values.sizes.split(',').map(Number);
const repeats = Number(values.repeats);

const NEW_MM = 7.5;
const gaugeOf = (pct: number): number => 1.6 + (pct / 100) * (NEW_MM - 1.6);

const sets = await loadRealSets(positionals[0]!);
const mich = sets.find((s) => s.name === 'michelin-twi');
if (!mich) throw new Error(`no michelin-twi under ${positionals[0]}`);
const analyzer = await createOnnxAnalyzer({ modelsDir, threads: 2 });
process.stderr.write(`reading ${mich.samples.length} michelin-twi photos with ${analyzer.modelVersion}…\n`);
const outcomes = await analyzeReal(analyzer, mich.samples, undefined, { features: true });
// other kinds of tire photo, for how often a reader fitted on close-ups calls them unlike its photos
const others: Array<{ name: string; features: Float32Array[] }> = [];
for (const name of ['web-good-defective', 'tyre-defect-ccby']) {
  const set = sets.find((s) => s.name === name);
  if (!set) continue;
  process.stderr.write(`reading ${set.samples.length} ${name} photos…\n`);
  const read = await analyzeReal(analyzer, set.samples, undefined, { features: true });
  others.push({ name, features: read.flatMap((o) => (o.analysis && o.features ? [o.features] : [])) });
}
await analyzer.close();
const answered = outcomes.filter((o): o is RealOutcome & { analysis: NonNullable<RealOutcome['analysis']> } => o.analysis !== null);
if (answered.some((o) => !o.features))
  throw new Error(`${analyzer.modelVersion} gives no features: a shop's reader needs scene models since tread-2026.11.29.4`);
const folds = [...new Set(answered.map((o) => o.sample.fold!))].sort((a, b) => a - b);
process.stderr.write(`${answered.length} answered, ${outcomes.length - answered.length} refused; capture-day folds ${folds.join(', ')}\n`);

const point = (o: (typeof answered)[number]): ShopPoint => pointFrom(gaugeOf(o.sample.pct!), o.analysis, o.features);
const clampMm = (v: number) => Math.min(MAX_TREAD_DEPTH_MM, Math.max(0, v));

interface Read {
  o: (typeof answered)[number];
  shipped: number;
  calibrated: number;
  /** Whether the calibrated 80 % interval holds the approximate gauge reading. */
  covered: boolean;
  /** The calibrated result as the app answers it (the calibrated models written and loaded; in the learning curve, the shipped one). */
  result: Analysis;
}
const base = await readManifestJson(modelsDir);
if (!base) throw new Error(`${modelsDir} has no manifest`);
const work = await mkdtemp(path.join(tmpdir(), 'tw-shop-reader-'));
const reads: Read[] = [];
const fits: Array<{ fold: number; fit: ShopFit }> = [];
try {
  for (const k of folds) {
    const train = answered.filter((o) => o.sample.fold !== k);
    const fit = await fitShopCalibrationWithReader(train.map(point));
    fits.push({ fold: k, fit });
    const held = answered.filter((a) => a.sample.fold === k);
    let results: Array<Analysis | null> = held.map((o) => o.analysis);
    if (fit.readerApplied || fit.depthApplied || fit.intervalApplied) {
      // the held-out day through the app with the calibration it would write: models written, loaded, each photo analysed
      const outDir = path.join(work, `day${k}`);
      await writeCalibratedModels({ baseDir: modelsDir, base, fit, outDir, created: new Date(), labelsSha256: null });
      const calibrated = await createOnnxAnalyzer({ modelsDir: outDir, threads: 2 });
      results = (
        await analyzeReal(
          calibrated,
          held.map((o) => o.sample),
        )
      ).map((r) => r.analysis);
      await calibrated.close();
    }
    held.forEach((o, i) => {
      const result = results[i];
      if (!result) return; // refused by the gate: the same gate as the shipped models', so not expected
      const gauge = gaugeOf(o.sample.pct!);
      const covered = gauge >= result.depthRangeMm.min - 0.05 && gauge <= result.depthRangeMm.max + 0.05;
      reads.push({ o, shipped: o.analysis.estimatedDepthMm, calibrated: result.estimatedDepthMm, covered, result });
    });
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

const f3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '–');
const pctOf = (r: Read) => r.o.sample.pct!;
function figures(rs: Read[], by: (r: Read) => number) {
  const ends = rs.filter((r) => pctOf(r) <= 25 || pctOf(r) >= 75);
  const worn = ends.filter((r) => pctOf(r) <= 25);
  const usable = ends.filter((r) => pctOf(r) >= 75);
  const ba = 0.5 * (worn.filter((r) => by(r) < 3).length / worn.length + usable.filter((r) => by(r) >= 3).length / usable.length);
  const planed = rs.filter((r) => r.o.sample.madeBy === 'planed');
  const notPlaned = rs.filter((r) => r.o.sample.madeBy !== 'planed');
  const mae = rs.reduce((s, r) => s + Math.abs(by(r) - gaugeOf(pctOf(r))), 0) / rs.length;
  // the ends told apart by the reading's order, whatever the line (the chance that a usable tire reads deeper than a worn one)
  let wins = 0;
  for (const u of usable) for (const w of worn) wins += by(u) > by(w) ? 1 : by(u) === by(w) ? 0.5 : 0;
  return {
    spearman: spearman(rs.map(by), rs.map(pctOf)),
    planed: spearman(planed.map(by), planed.map(pctOf)),
    notPlaned: spearman(notPlaned.map(by), notPlaned.map(pctOf)),
    ba,
    auc: wins / (usable.length * worn.length),
    mae,
  };
}
const row = (name: string, x: ReturnType<typeof figures>, coverage: string) =>
  `| ${name} | ${f3(x.spearman)} | ${f3(x.notPlaned)} | ${f3(x.planed)} | ${f3(x.ba)} | ${f3(x.auc)} | ${x.mae.toFixed(2)} | ${coverage} |`;

const out: string[] = [];
out.push(
  `michelin-twi, each capture day read by a calibration fitted on the other days (${answered.length} photos answered, ${analyzer.modelVersion}):`,
  '',
  '| read by | Spearman | within not planed | within planed | ends BA at 3 mm (0–25 vs 75–100) | ends AUC | MAE vs approx. gauge, mm | 80 % interval holds it |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  row(
    'the models as shipped',
    figures(reads, (r) => r.shipped),
    '–',
  ),
  row(
    "the shop's calibration",
    figures(reads, (r) => r.calibrated),
    `${((100 * reads.filter((r) => r.covered).length) / reads.length).toFixed(1)} %`,
  ),
  '',
  ...(() => {
    const worn = reads.filter((r) => pctOf(r) <= 25);
    const dangerous = worn.filter((r) => r.calibrated >= 3 && r.result.confidence >= 0.8).length;
    const right = reads.filter((r) => r.calibrated < 3 === gaugeOf(pctOf(r)) < 3).length;
    const mean = reads.reduce((sum, r) => sum + r.result.confidence, 0) / reads.length;
    const preliminary = reads.filter((r) => r.result.isPreliminary).length;
    const shippedPreliminary = reads.filter((r) => r.o.analysis.isPreliminary).length;
    const alignment = reads.map((r) => r.result.modelAlignment).sort((a, b) => a - b)[reads.length >> 1]!;
    const share = (n: number) => `${((100 * n) / reads.length).toFixed(1)} %`;
    const maeOf = (rs: Read[]) => (rs.reduce((sum, r) => sum + Math.abs(r.calibrated - gaugeOf(pctOf(r))), 0) / rs.length).toFixed(2);
    const marked = reads.filter((r) => r.result.isPreliminary);
    const unmarked = reads.filter((r) => !r.result.isPreliminary);
    return [
      `through the app with each day's calibration: dangerous (0–25 read 3 mm or more with confidence ≥ 0.8) ${dangerous} of ${worn.length}; ` +
        `mean confidence ${(100 * mean).toFixed(1)} % against ${share(right)} on the right side of 3 mm by the approximate gauge; ` +
        `preliminary ${share(preliminary)} (as shipped ${share(shippedPreliminary)}); median modelAlignment ${alignment}; ` +
        `mean error vs the approximate gauge ${maeOf(marked)} mm on the preliminary, ${maeOf(unmarked)} mm on the others`,
      '',
    ];
  })(),
  ...(() => {
    const withReader = fits.filter(({ fit }) => fit.reader);
    if (!withReader.length) return [];
    const share = (features: Float32Array[], reader: NonNullable<ShopFit['reader']>) =>
      features.filter((f) => readPhoto(reader, f).spread > reader.typicalBelow).length / features.length;
    const heldOut = withReader.map(({ fold, fit }) =>
      share(
        answered.filter((o) => o.sample.fold === fold).map((o) => o.features!),
        fit.reader!,
      ),
    );
    const mean = (v: number[]) => (100 * v.reduce((a, b) => a + b, 0)) / v.length;
    return [
      `read as unlike the shop's photos (spread above the reader's typicalBelow; preliminary, whole scale), mean over the ${withReader.length} days' readers: ` +
        [
          `the held-out day's close-ups ${mean(heldOut).toFixed(1)} %`,
          ...others.map(({ name, features }) => `${name} (answered) ${mean(withReader.map(({ fit }) => share(features, fit.reader!))).toFixed(1)} %`),
        ].join(', '),
      '',
    ];
  })(),
  "by the label (the approximate gauge reading beside it): median depth read by the shop's calibration, and the share read under 3 mm",
  '',
  '| twiRemainingPct | approx. gauge, mm | photos | median read, mm | read under 3 mm |',
  '|---:|---:|---:|---:|---:|',
  ...[...new Set(reads.map(pctOf))]
    .sort((a, b) => a - b)
    .map((p) => {
      const rs = reads.filter((r) => pctOf(r) === p).map((r) => r.calibrated);
      return `| ${p} | ${gaugeOf(p).toFixed(1)} | ${rs.length} | ${median(rs).toFixed(1)} | ${((100 * rs.filter((v) => v < 3).length) / rs.length).toFixed(0)} % |`;
    }),
  '',
  "what each day's calibration kept (fitted on the other days):",
  ...fits.map(
    ({ fold, fit }) =>
      `- day ${fold}: ${fit.tires} photos; ${fit.readerApplied ? `reader kept (λ ${fit.reader!.lambda}, ± ${fit.reader!.halfWidthMm.toFixed(2)} mm)` : `line${fit.depthApplied ? '' : ' not'} applied`}; cross-validated MAE ${fit.before.mae.toFixed(2)} → ${fit.after.mae.toFixed(2)} mm`,
  ),
  '',
  `learning curve: readers fitted on n photos drawn from the other days (${repeats} draws each), Spearman on the held-out day's photos, pooled:`,
  '',
  '| n photos | Spearman | within planed | ends BA at 3 mm | ends AUC |',
  '|---:|---:|---:|---:|---:|',
);
const rng = random(7);
for (const n of sizes) {
  const got: Array<ReturnType<typeof figures>> = [];
  for (let rep = 0; rep < repeats; rep++) {
    const rs: Read[] = [];
    for (const k of folds) {
      const pool = answered.filter((o) => o.sample.fold !== k);
      const order = pool.map((o) => [rng(), o] as const).sort((a, b) => a[0] - b[0]);
      const pick = order.slice(0, Math.min(n, pool.length)).map(([, o]) => o);
      const { reader } = await fitReader(
        pick.map((o) => o.features!),
        pick.map((o) => gaugeOf(o.sample.pct!)),
        5,
      );
      for (const o of answered.filter((a) => a.sample.fold === k))
        rs.push({ o, shipped: o.analysis.estimatedDepthMm, calibrated: clampMm(readDepth(reader, o.features!)), covered: false, result: o.analysis });
    }
    got.push(figures(rs, (r) => r.calibrated));
  }
  const mean = (f: (x: ReturnType<typeof figures>) => number) => got.reduce((s, x) => s + f(x), 0) / got.length;
  const sd = (f: (x: ReturnType<typeof figures>) => number) => Math.sqrt(got.reduce((s, x) => s + (f(x) - mean(f)) ** 2, 0) / got.length);
  out.push(
    `| ${n} | ${f3(mean((x) => x.spearman))} ± ${f3(sd((x) => x.spearman))} | ${f3(mean((x) => x.planed))} | ${f3(mean((x) => x.ba))} | ${f3(mean((x) => x.auc))} |`,
  );
  process.stderr.write(`n ${n} done\n`);
}
process.stdout.write(`${out.join('\n')}\n`);
