/**
 * The evaluations' printed reports: the synthetic report (`npm run eval -- DIR`, eval-metrics.ts)
 * and the real-photo table the model card carries (`--real`, eval-real.ts).
 */
import type { CiFigure, Report } from './eval-metrics.js';
import type { RealFigures, WearMadeFigures } from './eval-real.js';
import { WEAR_CLASSES } from './index.js';

const pct = (v: number) => `${(100 * v).toFixed(1)} %`;

/** "  (95 % CI 1.00–1.08)" after a figure, when the report has that interval. */
function ciText(r: Report, k: CiFigure, show: (v: number) => string): string {
  const range = r.ci?.[k];
  return range ? `  (95 % CI ${show(range[0])}–${show(range[1])})` : '';
}

export function formatReport(r: Report, modelVersion: string): string {
  const lines = [`model ${modelVersion}: ${r.images} images (${r.tires} tires, ${r.nonTires} non-tires)`];
  const mm = (v: number) => v.toFixed(2);
  const pctNoUnit = (v: number) => (100 * v).toFixed(1);
  if (r.depth) {
    lines.push(
      `depth MAE           ${r.depth.mae.toFixed(2)} mm over ${r.depth.n}${ciText(r, 'mae', mm)}`,
      `within 1 mm         ${pct(r.depth.within1mm)}${ciText(r, 'within1mm', pctNoUnit)}`,
    );
  }
  if (r.depthByBand.length) {
    lines.push(
      `${'by true depth'.padEnd(20)}${'band'.padEnd(9)}${'n'.padStart(4)}${'MAE mm'.padStart(9)}${'within 1 mm'.padStart(14)}${'bias mm'.padStart(10)}`,
    );
    for (const b of r.depthByBand) {
      const bias = `${b.bias >= 0 ? '+' : ''}${b.bias.toFixed(2)}`;
      lines.push(
        `${''.padEnd(20)}${b.band.padEnd(9)}${String(b.n).padStart(4)}${b.mae.toFixed(2).padStart(9)}${pct(b.within1mm).padStart(14)}${bias.padStart(10)}`,
      );
    }
  }
  if (r.preliminary) {
    const p = r.preliminary;
    const there = p.maePreliminary === null ? '' : `MAE ${p.maePreliminary.toFixed(2)} mm there`;
    const elsewhere = p.maeConfirmed === null ? '' : `${there ? ' vs ' : 'MAE '}${p.maeConfirmed.toFixed(2)} mm elsewhere`;
    lines.push(`preliminary         ${pct(p.share)} of results; ${there}${elsewhere}`);
  }
  if (r.wear) {
    lines.push(
      `wear accuracy       ${pct(r.wear.accuracy)} over ${r.wear.n}${ciText(r, 'wearAccuracy', pctNoUnit)}`,
      `balanced accuracy   ${pct(r.wear.balancedAccuracy)}`,
    );
    lines.push('confusion (rows truth, columns reported):', `  ${''.padStart(9)}${WEAR_CLASSES.map((c) => c.padStart(9)).join('')}`);
    for (const t of WEAR_CLASSES) lines.push(`  ${t.padStart(9)}${WEAR_CLASSES.map((p) => String(r.wear!.confusion[t]![p]).padStart(9)).join('')}`);
  }
  if (r.wornVsUsable) {
    const b = r.wornVsUsable;
    lines.push(
      `worn-vs-usable      balanced accuracy ${b.balancedAccuracy.toFixed(3)} (bad recall ${pct(b.badRecall)}, usable recall ${pct(b.usableRecall)})${ciText(r, 'wornVsUsable', (v) => v.toFixed(3))}`,
    );
    if (b.allTires.n > b.n) {
      lines.push(
        `                    ${b.allTires.balancedAccuracy.toFixed(3)} over all ${b.allTires.n} tires, counting the ${b.allTires.n - b.n} without an answer as wrong`,
      );
    }
  }
  if (r.interval) lines.push(`80 % interval       coverage ${pct(r.interval.coverage)}${ciText(r, 'coverage', pctNoUnit)}`);
  if (r.calibrationError !== null) {
    const lean = r.meanConfidence !== null && r.wear ? `; mean confidence ${pct(r.meanConfidence)} vs accuracy ${pct(r.wear.accuracy)}` : '';
    lines.push(`calibration error   ${r.calibrationError.toFixed(3)} (ECE, 10 bins${lean})${ciText(r, 'calibrationError', (v) => v.toFixed(3))}`);
  }
  if (r.tiresRefused !== null) lines.push(`tires refused       ${pct(r.tiresRefused)}`);
  if (r.nonTiresRefused !== null) lines.push(`non-tires refused   ${pct(r.nonTiresRefused)}`);
  if (r.twi) {
    const t = r.twi;
    const corr = Number.isFinite(t.correlation) ? t.correlation.toFixed(2) : 'n/a';
    const withBar = t.anyWithBar === null ? 'no photo with a bar in sight' : `above 0 in ${pct(t.anyWithBar)} of photos with a bar in sight`;
    const without = t.withoutBar ? `, ${pct(t.anyWithoutBar)} of the ${t.withoutBar} without one` : '';
    lines.push(
      `TWI bars            reported ${t.meanReported.toFixed(1)} vs ${t.meanTrue.toFixed(1)} visible on average over ${t.n}; exact ${pct(t.exact)}, within 1 ${pct(t.withinOne)}, correlation ${corr}`,
      `                    ${withBar}${without}`,
    );
  }
  if (Object.keys(r.errors).length) lines.push(`errors              ${JSON.stringify(r.errors)}`);
  if (Number.isFinite(r.msPerImage.median)) {
    lines.push(`time per image      median ${r.msPerImage.median.toFixed(1)} ms, p95 ${r.msPerImage.p95.toFixed(1)} ms`);
  }
  return `${lines.join('\n')}\n`;
}

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
  for (const r of rows) if (r.wearMade) lines.push('', ...formatWearMade(r.set, r.wearMade));
  return `${lines.join('\n')}\n`;
}

/** michelin-twi by how the wear was made: the "rough = worn" check (eval-real.ts, WearMadeFigures). */
function formatWearMade(set: string, w: WearMadeFigures): string[] {
  const mm = (v: number | null) => (v === null ? '' : `${v.toFixed(1)} mm`);
  const lines = [
    `**${set} by how the wear was made** (planed tread looks rougher than tread worn on the road):`,
    '',
    '| made by | gauge left | photos | answered | median depth | read not usable | 80 % interval reaches the gauge depth |',
    `|${' --- |'.repeat(7)}`,
    ...w.groups.map(
      (g) =>
        `| ${g.madeBy} | ${g.pct} % | ${g.n} | ${pct(g.answered / g.n)} | ${mm(g.medianDepthMm)} | ${g.readNotUsable === null ? '' : pct(g.readNotUsable)} | ${g.intervalHolds === null ? '' : pct(g.intervalHolds)} |`,
    ),
    '',
  ];
  const order = (o: { n: number; rho: number } | null) => (o ? `${f3(o.rho)} (n ${o.n})` : 'n/a');
  const pair = (p: { n: [number, number]; auc: number } | null) => (p ? `${f3(p.auc)} (${p.n[0]} against ${p.n[1]})` : 'n/a');
  lines.push(
    `The 80 % interval reaches the depth the gauge allows (1.6 + gauge left × (new − 1.6) mm, new 7–8 mm: realdata/README.md) for ${w.intervalHolds === null ? 'n/a' : pct(w.intervalHolds)} of the answered. ` +
      `Order (Spearman) within the tires not planed: ${order(w.orderNotPlaned)}; within the planed: ${order(w.orderPlaned)}. ` +
      `Road-worn 80–90 % read deeper than planed 75 % (≈ 0.3–0.9 mm deeper): ${pair(w.roadOverPlaned75)}; ` +
      `planed 75 % read deeper than planed 50 % (≈ 1.5 mm deeper): ${pair(w.planed75OverPlaned50)}. ` +
      'A reader that learned "rough = worn" tells the first pair apart better than the second.',
  );
  return lines;
}
