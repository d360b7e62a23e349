/**
 * In-process analysis benchmark: `npx tsx bench/analyze.ts [--runs 30] [--threads N] [--models DIR]`.
 * Builds a 12-megapixel JPEG, a 1-megapixel PNG and a 3-megapixel WebP from a
 * held-out fixture (nothing big is committed), then times analyzer.analyze on each
 * (decode + both networks + combination; --verbose adds the overlays).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { createOnnxAnalyzer } from '../src/core/analysis/index.js';
import { exitWithUsage } from './cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const usage = 'usage: npx tsx bench/analyze.ts [--runs 30] [--threads N] [--models DIR] [--verbose]';
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) exitWithUsage(usage, 'help');
/** The flags (--verbose takes no value, so parseArgs rather than checkFlags); refused before any work. */
function flags() {
  try {
    return parseArgs({
      options: {
        runs: { type: 'string', default: '30' },
        threads: { type: 'string' },
        models: { type: 'string' },
        verbose: { type: 'boolean', default: false },
      },
      strict: true,
    });
  } catch (err) {
    return exitWithUsage(usage, (err as Error).message);
  }
}
const { values } = flags();
const count = (name: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) exitWithUsage(usage, `--${name} must be a whole number above 0, not "${text}"`);
  return n;
};
const runs = count('runs', values.runs)!;
const threads = count('threads', values.threads);
const verbose = values.verbose;
const modelsDir = values.models ? path.resolve(values.models) : path.join(root, 'models');

const source = readFileSync(path.join(root, 'test/fixtures/tires/parity/tread.jpg'));

/** A phone-like 12 MP photo: the fixture upscaled plus sensor-like noise, so the JPEG has a realistic size. */
async function phonePhoto(): Promise<Buffer> {
  const { data, info } = await sharp(source).resize(4000, 3000, { kernel: 'cubic' }).raw().toBuffer({ resolveWithObject: true });
  let seed = 12345;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = Math.max(0, Math.min(255, data[i]! + ((seed >>> 16) % 17) - 8));
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
}

const images: [string, Buffer][] = [
  ['12 MP JPEG (4000x3000, q92)', await phonePhoto()],
  ['1 MP PNG (1155x866)', await sharp(source).resize(1155, 866).png().toBuffer()],
  ['3 MP WebP (2000x1500, q85)', await sharp(source).resize(2000, 1500).webp({ quality: 85 }).toBuffer()],
];

const analyzer = await createOnnxAnalyzer({ modelsDir, ...(threads ? { threads } : {}) });
const pct = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
console.log(`model ${analyzer.modelVersion}, ${runs} runs per image${verbose ? ', verbose' : ''}`);
for (const [name, image] of images) {
  await analyzer.analyze({ image, verbose });
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await analyzer.analyze({ image, verbose });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const mb = (image.length / 1048576).toFixed(1);
  console.log(`${name.padEnd(30)} ${mb.padStart(5)} MB  median ${pct(times, 0.5).toFixed(1)} ms  p95 ${pct(times, 0.95).toFixed(1)} ms`);
}
await analyzer.close();
