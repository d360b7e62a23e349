/**
 * What fitting a shop's own reader costs (src/core/analysis/shop-reader.ts): wall time, the longest
 * the event loop waited meanwhile (a POS request arriving during a calibration waits that long at
 * most), and the memory it holds, for shops of n gauge readings. Features are random numbers of
 * the scene network's count (3 296); the cost does not depend on what they hold.
 *
 *   npx tsx bench/shop-reader.ts [--sizes 100,300,700,1500]
 */
import { parseArgs } from 'node:util';
import { random } from '../src/core/analysis/eval-metrics.js';
import { fitReader } from '../src/core/analysis/shop-reader.js';
import { FOLDS } from '../src/core/analysis/shop-calibration.js';
import { watched } from './watch.js';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '100,300,700,1500' } } });
const FEATURES = 3296;
const r = random(11);
process.stdout.write(`shop reader fit, ${FEATURES} features, ${FOLDS} folds; Node ${process.version}\n`);
process.stdout.write('| photos | wall s | longest event-loop wait ms | RSS growth MB |\n|---:|---:|---:|---:|\n');
for (const n of values.sizes.split(',').map(Number)) {
  const features = Array.from({ length: n }, () => Float32Array.from({ length: FEATURES }, () => 2 * r() - 1));
  const gauge = features.map((f) => 4 + f[0]! + 0.5 * f[1]!);
  const { ms, rssBefore, rssPeak, loop } = await watched(() => fitReader(features, gauge, FOLDS), 5);
  process.stdout.write(`| ${n} | ${(ms / 1000).toFixed(1)} | ${(loop.max / 1e6).toFixed(0)} | ${((rssPeak - rssBefore) / 2 ** 20).toFixed(0)} |\n`);
}
