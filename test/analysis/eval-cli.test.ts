/** `npm run eval` end to end: usage mistakes, bad labels, missing models, and a small real run with the shipped models. */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Report } from '../../src/core/analysis/eval-metrics.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const HELDOUT = path.join(ROOT, 'test/fixtures/tires/heldout');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tw-evalcli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function evalCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/core/cli/eval.ts', ...args], { cwd: ROOT }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

test('usage mistakes exit 2 with the reason and the usage line', async () => {
  for (const [args, reason] of [
    [[], /which folder\?/],
    [[HELDOUT, 'more'], /one folder expected, got 2/],
    [[HELDOUT, '--jsn'], /Unknown option '--jsn'/],
    [[HELDOUT, '--models'], /--models.*argument missing/],
    [[HELDOUT, '--bootstrap', 'many'], /--bootstrap takes a whole number of resamples, 0 to 100000/],
    [[HELDOUT, '--bootstrap=-5'], /--bootstrap takes a whole number/],
    [[HELDOUT, '--bootstrap', '1e9'], /--bootstrap takes a whole number/],
  ] as const) {
    const r = await evalCli(...args);
    expect(r.code, args.join(' ')).toBe(2);
    expect(r.stderr).toMatch(reason);
    expect(r.stderr).toMatch(/usage: npm run eval -- DIR \[--models DIR\] \[--bootstrap N\] \[--json\]/);
  }
});

test('bad labels exit 2 naming the line, before any model loads', async () => {
  await writeFile(path.join(dir, 'labels.csv'), 'file,depthMm,wear\nsyn_0000.jpg,0.77,crit\n');
  const r = await evalCli(dir, '--models', path.join(dir, 'no-models'));
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/labels.csv line 2: wear "crit" is not one of/);
});

test('missing models exit 1 with MODEL_UNAVAILABLE', async () => {
  await copyFile(path.join(HELDOUT, 'syn_0000.jpg'), path.join(dir, 'syn_0000.jpg'));
  await writeFile(path.join(dir, 'labels.csv'), 'file,depthMm,wear\nsyn_0000.jpg,0.77,critical\n');
  const r = await evalCli(dir, '--models', path.join(dir, 'no-models'));
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^eval: MODEL_UNAVAILABLE: /m);
});

test('a small labelled folder: tires, a non-tire and a broken file are all counted', async () => {
  // syn_0000.jpg is in the folder but not in labels.csv
  for (const f of ['syn_0000.jpg', 'syn_0001.jpg', 'syn_0003.jpg', 'syn_0006.jpg']) await copyFile(path.join(HELDOUT, f), path.join(dir, f));
  await writeFile(path.join(dir, 'broken.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a]));
  await writeFile(path.join(dir, 'labels.csv'), 'file,depthMm,wear\nsyn_0001.jpg,4.71,medium\nsyn_0003.jpg,10.01,new\nsyn_0006.jpg,,notire\nbroken.jpg,3.0,\n');
  const r = await evalCli(dir, '--json');
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/1 image\(s\) in .* are not in labels.csv/);
  const report = JSON.parse(r.stdout) as Report;
  expect(report).toMatchObject({ images: 4, tires: 3, nonTires: 1 });
  expect(report.errors).toMatchObject({ IMAGE_UNREADABLE: 1 }); // the non-tire adds NO_TIRE_DETECTED when refused
  expect(report.nonTiresRefused).not.toBeNull();
  expect(report.depth?.n).toBe(2);
  // a depth in millimetres a tire can have; the shipped estimate comes from the scene reader, which
  // learned wear from real photos only, so on renders it is no yardstick (models/README.md)
  expect(report.depth!.mae).toBeGreaterThanOrEqual(0);
  expect(report.depth!.mae).toBeLessThan(10);
  // 95 % intervals by default, from resamples of the four images; none with --bootstrap 0
  expect(report.ci?.mae?.[0]).toBeLessThanOrEqual(report.depth!.mae);
  expect(report.ci?.mae?.[1]).toBeGreaterThanOrEqual(report.depth!.mae);
  const text = await evalCli(dir);
  expect(text.stdout).toMatch(/^depth MAE +\d\.\d\d mm over 2 {2}\(95 % CI \d\.\d\d–\d\.\d\d\)$/m);
  expect(text.stdout).toMatch(/^95 % CI: percentile bootstrap, 1000 resamples of the 4 images$/m);
  const plain = await evalCli(dir, '--bootstrap', '0');
  expect(plain.stdout).not.toContain('95 % CI');
}, 60_000);

test('--real: usage mistakes, and the real-photo table over the sets it finds', async () => {
  for (const [args, reason] of [
    [['--real', dir, HELDOUT], /--real takes the realdata folder/],
    [[HELDOUT, '--loso', dir], /--loso goes with --real/],
    [['--real', dir, '--limit', 'some'], /--limit takes a whole number/],
  ] as const) {
    const r = await evalCli(...args);
    expect(r.code, String(args)).toBe(2);
    expect(r.stderr).toMatch(reason);
  }
  const empty = await mkdtemp(path.join(tmpdir(), 'tw-evalreal-empty-'));
  const none = await evalCli('--real', empty);
  expect(none.code).toBe(2);
  expect(none.stderr).toMatch(/no real photo set found/);
  // two tires as web-good-defective (one usable, one worn) and a real tread photo as michelin's 100 %
  const real = await mkdtemp(path.join(tmpdir(), 'tw-evalreal-'));
  await mkdir(path.join(real, 'web-good-defective', 'good'), { recursive: true });
  await mkdir(path.join(real, 'web-good-defective', 'defective'), { recursive: true });
  await copyFile(path.join(ROOT, 'test/fixtures/real/tread-1.jpg'), path.join(real, 'web-good-defective', 'good', 'a.jpg'));
  await copyFile(path.join(ROOT, 'test/fixtures/real/tread-2.jpg'), path.join(real, 'web-good-defective', 'defective', 'b.jpg'));
  const perPhoto = path.join(real, 'photos.csv');
  const r = await evalCli('--real', real, '--bootstrap', '20', '--per-photo', perPhoto);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^\| set \| scored by \| photos \|/m);
  // the shipped weights learned from web-good-defective: the row says so
  expect(r.stdout).toMatch(/^\| web-good-defective \| trained on \(tread-[^)]+\) \| 2 \|/m);
  const { readFile } = await import('node:fs/promises');
  const rows = (await readFile(perPhoto, 'utf8')).trim().split('\n');
  expect(rows).toHaveLength(3);
  expect(rows[0]).toBe('set,file,box,truth,pct,error,estimatedDepthMm,confidence,isPreliminary,modelAlignment,preliminaryReasons');
  // an answered photo's reasons, space-separated, given exactly when it is preliminary
  for (const row of rows.slice(1)) {
    const cells = row.split(',');
    if (cells[5] !== '') continue; // refused
    const reasons = cells[10]!.split(' ').filter(Boolean);
    expect(reasons.length > 0).toBe(cells[8] === 'true');
    for (const reason of reasons) expect(['models_disagree', 'tread_barely_visible', 'unlike_training_photos', 'unlike_shop_photos']).toContain(reason);
  }
  await rm(real, { recursive: true, force: true });
  await rm(empty, { recursive: true, force: true });
}, 60_000);
