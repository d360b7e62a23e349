/**
 * A labelled folder as another camera would have taken it: every photo's tones mapped through
 * out = in^GAMMA (GAMMA < 1 lifts the shadows, as phones' HDR pipelines do) and saved as JPEG
 * quality 90, labels.csv rows FROM-TO (1-based, header not counted) kept. The shop-calibration
 * demonstration of models/NOTEBOOK.md ("A shop's own calibration") is made with it:
 *
 *   npx tsx scripts/tone-shift.ts models/training/data/heldoutHR /tmp/hdrA --rows 1-300
 *   npx tsx scripts/tone-shift.ts models/training/data/heldoutHR /tmp/hdrB --rows 301-600
 *   npm run calibrate -- /tmp/hdrA --out /tmp/hdrCal
 *   npm run eval -- /tmp/hdrB && npm run eval -- /tmp/hdrB --models /tmp/hdrCal
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { csvCells } from '../src/core/analysis/eval-samples.js';
import { parseCli, usageError } from '../src/core/cli/args.js';

const USAGE = 'usage: npx tsx scripts/tone-shift.ts SRC DST [--rows FROM-TO] [--gamma G]';
const { values, positionals } = parseCli('tone-shift', USAGE, { rows: { type: 'string' }, gamma: { type: 'string', default: '0.6' } });
if (positionals.length !== 2) usageError('tone-shift', USAGE, 'a source and a destination folder.');
const [src, dst] = positionals as [string, string];
const gamma = Number(values.gamma);
if (!(gamma > 0.1 && gamma < 10)) usageError('tone-shift', USAGE, '--gamma takes a number from 0.1 to 10.');
const lines = (await readFile(path.join(src, 'labels.csv'), 'utf8')).trim().split(/\r?\n/);
const range = /^(\d+)-(\d+)$/.exec(values.rows ?? `1-${lines.length - 1}`);
if (!range) usageError('tone-shift', USAGE, '--rows takes FROM-TO, e.g. 1-300.');
const rows = lines.slice(Number(range[1]), Number(range[2]) + 1);
const fileColumn = csvCells(lines[0]!).findIndex((c) => c.toLowerCase() === 'file');
if (fileColumn < 0) usageError('tone-shift', USAGE, `${src}/labels.csv has no file column.`);

const lut = Buffer.from(Array.from({ length: 256 }, (_, i) => Math.round(255 * (i / 255) ** gamma)));
await mkdir(dst, { recursive: true });
for (const row of rows) {
  const file = csvCells(row)[fileColumn]!;
  const { data, info } = await sharp(path.join(src, file)).raw().toBuffer({ resolveWithObject: true });
  for (let i = 0; i < data.length; i++) data[i] = lut[data[i]!]!;
  await sharp(data, { raw: info }).jpeg({ quality: 90 }).toFile(path.join(dst, file));
}
await writeFile(path.join(dst, 'labels.csv'), `${[lines[0], ...rows].join('\n')}\n`);
process.stdout.write(`${rows.length} photos → ${dst} (gamma ${gamma})\n`);
