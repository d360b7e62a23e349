/** What `npm run eval` reads from a folder, and how it answers the mistakes of hand-made labels. */
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import type { Analyzer } from '../../src/core/analysis/analyzer.js';
import { analyzeLabelled } from '../../src/core/analysis/eval-run.js';
import { LabelsError, loadSamples, parseLabelsCsv, skippedLines } from '../../src/core/analysis/eval-samples.js';
import { MAX_IMAGE_BYTES } from '../../src/shared/contract/limits.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tw-eval-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const problems = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    if (error instanceof LabelsError) return error.problems;
    throw error;
  }
  throw new Error('expected a LabelsError');
};

test('labels.csv rows: depth, wear defaulting to the depth band, notire, binary classes, any column order and case', () => {
  const text =
    '\uFEFFWear, File ,depthMm\r\n# measured with a gauge\r\n,a.jpg,7.2\r\nworn,b.jpg,2.0\r\nNOTIRE,c.jpg,\r\n\r\nbad,d.jpg,\r\n"usable","e, with comma.jpg",\r\n,f.jpg,4.1 mm\r\n';
  expect(parseLabelsCsv(text, '/x')).toEqual([
    { file: path.join('/x', 'a.jpg'), depthMm: 7.2, truth: 'new' },
    { file: path.join('/x', 'b.jpg'), depthMm: 2, truth: 'worn' },
    { file: path.join('/x', 'c.jpg'), depthMm: null, truth: 'notire' },
    { file: path.join('/x', 'd.jpg'), depthMm: null, truth: 'bad' },
    { file: path.join('/x', 'e, with comma.jpg'), depthMm: null, truth: 'usable' },
    { file: path.join('/x', 'f.jpg'), depthMm: 4.1, truth: 'medium' },
  ]);
  // depth only, no wear column
  expect(parseLabelsCsv('file,depthMm\nz.jpg,1.0\n', '/x')).toEqual([{ file: path.join('/x', 'z.jpg'), depthMm: 1, truth: 'critical' }]);
});

test('every bad row is named by line, and nothing is measured on a partial set', () => {
  const text = [
    'file,depthMm,wear',
    'ok.jpg,5.5,',
    'unit.jpg,5.5in,', // 3
    'inches.jpg,250,', // 4: tenths of a mm or 32nds typed as mm
    'neg.jpg,-1,', // 5
    'typo.jpg,,bald', // 6
    'empty.jpg,,', // 7
    ',3.0,', // 8
    '../escape.jpg,3.0,', // 9
    '/etc/passwd,3.0,', // 10
    'ok.jpg,5.5,', // 11 duplicate
    'nt.jpg,4.0,notire', // 12
    'hex.jpg,0x5,', // 13: Number() would read 5
    'exp.jpg,1e1,', // 14: and 10
  ].join('\n');
  const p = problems(() => parseLabelsCsv(text, '/x'));
  expect(p).toHaveLength(12);
  expect(p[10]).toMatch(/line 13: depthMm "0x5" is not a tread depth/);
  expect(p[11]).toMatch(/line 14: depthMm "1e1" is not a tread depth/);
  expect(p[0]).toMatch(/line 3: depthMm "5.5in"/);
  expect(p[1]).toMatch(/line 4: depthMm "250"/);
  expect(p[2]).toMatch(/line 5: depthMm "-1"/);
  expect(p[3]).toMatch(/line 6: wear "bald" is not one of new, good, medium, worn, critical, notire/);
  expect(p[4]).toMatch(/line 7: neither a depth nor a wear class/);
  expect(p[5]).toMatch(/line 8: no file name/);
  expect(p[6]).toMatch(/line 9: "..\/escape.jpg" must be a path inside the folder/);
  expect(p[7]).toMatch(/line 10: "\/etc\/passwd" must be a path inside the folder/);
  expect(p[8]).toMatch(/line 11: "ok.jpg" is listed twice/);
  expect(p[9]).toMatch(/line 12: "nt.jpg" is labelled notire but has a depth/);
});

test('a wear class that contradicts the depth is named by line, five-class or binary; the depth’s band or side is kept', () => {
  const text = [
    'file,depthMm,wear',
    'a.jpg,8.2,critical', // 2: new by its depth
    'b.jpg,4.0,worn', // 3: medium, a neighbouring band
    'c.jpg,1.0,usable', // 4: critical, so bad
    'd.jpg,5.5 mm,bad', // 5: good, so usable
    'e.jpg,7.02,good', // 6: past the rounding of 7.00
    'f.jpg,7.1,good', // 7: past the rounding of 7.1
  ].join('\n');
  expect(problems(() => parseLabelsCsv(text, '/x'))).toEqual([
    'labels.csv line 2: "a.jpg" is labelled critical but its depthMm "8.2" is in the new band.',
    'labels.csv line 3: "b.jpg" is labelled worn but its depthMm "4.0" is in the medium band.',
    'labels.csv line 4: "c.jpg" is labelled usable but its depthMm "1.0" is in the critical band, which counts as bad.',
    'labels.csv line 5: "d.jpg" is labelled bad but its depthMm "5.5 mm" is in the good band, which counts as usable.',
    'labels.csv line 6: "e.jpg" is labelled good but its depthMm "7.02" is in the new band.',
    'labels.csv line 7: "f.jpg" is labelled good but its depthMm "7.1" is in the new band.',
  ]);
  const agreeing = [
    'file,depthMm,wear',
    'a.jpg,8.2,new',
    'b.jpg,4.0,Medium',
    'c.jpg,1.0,bad',
    'd.jpg,5.5 mm,usable',
    'e.jpg,3.0,usable', // medium: usable from 3.0 mm
    'f.jpg,2.99,bad', // worn
    'g.jpg,7.00,good', // written rounded: 6.996 mm is good (make_dataset.py writes 7.00)
    'h.jpg,7.00,new',
    'i.jpg,1.60,critical',
    'j.jpg,3,bad', // a whole number: within 0.05 mm of 3, worn is bad
  ].join('\n');
  expect(parseLabelsCsv(agreeing, '/x').map((s) => [path.basename(s.file), s.depthMm, s.truth])).toEqual([
    ['a.jpg', 8.2, 'new'],
    ['b.jpg', 4, 'medium'],
    ['c.jpg', 1, 'bad'],
    ['d.jpg', 5.5, 'usable'],
    ['e.jpg', 3, 'usable'],
    ['f.jpg', 2.99, 'bad'],
    ['g.jpg', 7, 'good'],
    ['h.jpg', 7, 'new'],
    ['i.jpg', 1.6, 'critical'],
    ['j.jpg', 3, 'bad'],
  ]);
});

test('a header without the needed columns, and an empty file, are refused', () => {
  expect(problems(() => parseLabelsCsv('name,mm\na.jpg,3\n', '/x'))[0]).toMatch(/header must name "file"/);
  expect(problems(() => parseLabelsCsv('file\na.jpg\n', '/x'))[0]).toMatch(/header must name "file" and "depthMm" and\/or "wear"/);
  expect(problems(() => parseLabelsCsv('\n\n', '/x'))[0]).toMatch(/labels.csv is empty/);
});

test('a folder with labels.csv: listed files must exist, unlisted images are counted', async () => {
  await writeFile(path.join(dir, 'a.jpg'), 'x');
  await writeFile(path.join(dir, 'stray.png'), 'x');
  await writeFile(path.join(dir, 'notes.txt'), 'x');
  await writeFile(path.join(dir, 'labels.csv'), 'file,depthMm\na.jpg,3.2\n');
  const loaded = await loadSamples(dir);
  expect(loaded.samples).toEqual([{ file: path.join(dir, 'a.jpg'), depthMm: 3.2, truth: 'medium' }]);
  expect(loaded.unlisted).toBe(1);
  await writeFile(path.join(dir, 'labels.csv'), 'file,depthMm\na.jpg,3.2\ngone.jpg,2\nsub,2\n');
  await mkdir(path.join(dir, 'sub'));
  await expect(loadSamples(dir)).rejects.toMatchObject({
    problems: [`labels.csv lists gone.jpg, which is not a file in ${dir}.`, `labels.csv lists sub, which is not a file in ${dir}.`],
  });
});

test('class folders: five names, notire, the binary pair, good as usable only without five-class folders', async () => {
  for (const [folder, file] of [
    ['good', 'g.jpg'],
    ['bad', 'b.JPEG'],
    ['notire', 'n.webp'],
    ['misc', 'm.jpg'],
  ] as const) {
    await mkdir(path.join(dir, folder), { recursive: true });
    await writeFile(path.join(dir, folder, file), 'x');
  }
  await writeFile(path.join(dir, 'good', 'readme.txt'), 'x');
  let loaded = await loadSamples(dir);
  expect(loaded.samples.map((s) => [path.basename(s.file), s.truth])).toEqual([
    ['b.JPEG', 'bad'],
    ['g.jpg', 'usable'],
    ['n.webp', 'notire'],
  ]);
  expect(loaded.ignored).toEqual(['misc']);
  await mkdir(path.join(dir, 'worn'));
  await writeFile(path.join(dir, 'worn', 'w.png'), 'x');
  loaded = await loadSamples(dir);
  expect(loaded.samples.find((s) => s.file.endsWith('g.jpg'))?.truth).toBe('good');
  expect(loaded.samples.find((s) => s.file.endsWith('w.png'))?.truth).toBe('worn');
});

test('class folders: a linked class folder is measured; subfolders, other files and loose photos are named, not silently dropped', async () => {
  const elsewhere = path.join(dir, '..', `${path.basename(dir)}-worn`);
  await mkdir(elsewhere);
  try {
    await writeFile(path.join(elsewhere, 'w.jpg'), 'x');
    await mkdir(path.join(dir, 'bad', 'batch2'), { recursive: true });
    await writeFile(path.join(dir, 'bad', 'b.jpg'), 'x');
    await writeFile(path.join(dir, 'bad', 'batch2', 'b2.jpg'), 'x');
    await mkdir(path.join(dir, 'usable'));
    await writeFile(path.join(dir, 'usable', 'u.jpg'), 'x');
    await writeFile(path.join(dir, 'usable', 'IMG_1.HEIC'), 'x');
    await writeFile(path.join(dir, 'usable', '.DS_Store'), 'x');
    await writeFile(path.join(dir, 'top.jpg'), 'x');
    await symlink(elsewhere, path.join(dir, 'critical'));
    const loaded = await loadSamples(dir);
    expect(loaded.samples.map((s) => [path.relative(dir, s.file), s.truth])).toEqual([
      [path.join('bad', 'b.jpg'), 'bad'],
      [path.join('critical', 'w.jpg'), 'critical'],
      [path.join('usable', 'u.jpg'), 'usable'],
    ]);
    expect(loaded.notMeasured).toEqual([
      'top.jpg (a photo outside the class folders)',
      'bad/batch2/ (a folder inside a class folder: photos must lie directly in it)',
      'usable/IMG_1.HEIC (not a .jpg, .jpeg, .png or .webp file)',
    ]);
    expect(skippedLines(loaded, dir).join('\n')).toMatch(/not measured, 3 in .*\n {2}top\.jpg/);
  } finally {
    await rm(elsewhere, { recursive: true, force: true });
  }
});

test('labels.csv: one photo under two names is refused, and a labels.csv that cannot be read is a label problem, not a crash', async () => {
  await writeFile(path.join(dir, 'a.jpg'), 'x');
  await writeFile(path.join(dir, 'b.jpg'), 'x');
  await symlink(path.join(dir, 'a.jpg'), path.join(dir, 'link.jpg'));
  expect(problems(() => parseLabelsCsv('file,depthMm\na.jpg,3\n./a.jpg,3\nsub//../b.jpg,3\n', dir))).toEqual([
    'labels.csv line 3: "./a.jpg" is listed twice.',
    'labels.csv line 4: "sub//../b.jpg" must be a path inside the folder.',
  ]);
  await writeFile(path.join(dir, 'labels.csv'), 'file,depthMm\na.jpg,3\nb.jpg,4\nlink.jpg,3\n');
  await expect(loadSamples(dir)).rejects.toMatchObject({ problems: ['labels.csv lists a.jpg and link.jpg, which are the same file.'] });
  await rm(path.join(dir, 'labels.csv'));
  await mkdir(path.join(dir, 'labels.csv'));
  await expect(loadSamples(dir)).rejects.toThrow(LabelsError);
  await expect(loadSamples(dir)).rejects.toThrow(/labels\.csv cannot be read \(EISDIR\)/);
});

test('class folders: one photo linked into two class folders is refused, naming both', async () => {
  await mkdir(path.join(dir, 'good'));
  await mkdir(path.join(dir, 'bad'));
  await writeFile(path.join(dir, 'good', 'tire.jpg'), 'x');
  await writeFile(path.join(dir, 'good', 'other.jpg'), 'y');
  await symlink(path.join(dir, 'good', 'tire.jpg'), path.join(dir, 'bad', 'tire-again.jpg'));
  await expect(loadSamples(dir)).rejects.toMatchObject({
    problems: [`bad${path.sep}tire-again.jpg and good${path.sep}tire.jpg are the same file: one photo must be in one class folder, once.`],
  });
  await rm(path.join(dir, 'bad', 'tire-again.jpg'));
  await writeFile(path.join(dir, 'bad', 'tire-again.jpg'), 'x'); // a copy is a second photo, not a link: measured
  expect((await loadSamples(dir)).samples).toHaveLength(3);
});

test('nothing to measure, or no folder at all, is said plainly', async () => {
  await mkdir(path.join(dir, 'photos'));
  await expect(loadSamples(dir)).rejects.toThrow(/No labelled images in .*found only photos/);
  await expect(loadSamples(path.join(dir, 'nope'))).rejects.toThrow(/is not a folder/);
});

test('an optional twiBars column: a count of bars per photo, empty when not counted, anything else refused by line', () => {
  const text = 'file,depthMm,wear,twiBars\na.jpg,2.0,,4\nb.jpg,5.0,,\nc.jpg,,notire,0\n';
  expect(parseLabelsCsv(text, '/x')).toEqual([
    { file: path.join('/x', 'a.jpg'), depthMm: 2, truth: 'worn', twiBars: 4 },
    { file: path.join('/x', 'b.jpg'), depthMm: 5, truth: 'good' },
    { file: path.join('/x', 'c.jpg'), depthMm: null, truth: 'notire', twiBars: 0 },
  ]);
  expect(problems(() => parseLabelsCsv('file,depthMm,twiBars\na.jpg,2,2.5\nb.jpg,2,-1\nc.jpg,2,six\nd.jpg,2,101\ne.jpg,2,0x4\nf.jpg,2,1e1\n', '/x'))).toEqual([
    'labels.csv line 2: twiBars "2.5" is not a count of bars (a whole number from 0 to 100).',
    'labels.csv line 3: twiBars "-1" is not a count of bars (a whole number from 0 to 100).',
    'labels.csv line 4: twiBars "six" is not a count of bars (a whole number from 0 to 100).',
    'labels.csv line 5: twiBars "101" is not a count of bars (a whole number from 0 to 100).',
    'labels.csv line 6: twiBars "0x4" is not a count of bars (a whole number from 0 to 100).',
    'labels.csv line 7: twiBars "1e1" is not a count of bars (a whole number from 0 to 100).',
  ]);
});

test('a listed file over the upload limit is counted as FILE_TOO_LARGE without being read or analysed', async () => {
  const huge = path.join(dir, 'huge.jpg');
  await writeFile(huge, '');
  await truncate(huge, MAX_IMAGE_BYTES + 1); // sparse: no disk used
  const analyzer = { analyze: vi.fn() } as unknown as Analyzer;
  const warn = vi.fn();
  const [result] = await analyzeLabelled(analyzer, [{ file: huge, depthMm: 3, truth: 'medium' }], warn);
  expect(result!.outcome).toMatchObject({ error: 'FILE_TOO_LARGE' });
  expect(analyzer.analyze).not.toHaveBeenCalled();
  expect(warn).not.toHaveBeenCalled();
});
