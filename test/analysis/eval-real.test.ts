import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Analysis, Analyzer, AnalyzeRequest } from '../../src/core/analysis/analyzer.js';
import { formatRealTable } from '../../src/core/analysis/eval-format.js';
import {
  analyzeReal,
  deeperShare,
  gaugeDepthMm,
  loadRealSets,
  quartersWithoutWheels,
  realFigures,
  spearman,
  type RealOutcome,
} from '../../src/core/analysis/eval-real.js';
import { AppError } from '../../src/core/errors.js';

let root: string;

/** A photo whose mean brightness encodes what the fake analyzer answers. */
async function photo(file: string, grey: number, width = 300, height = 300): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(
    file,
    await sharp({ create: { width, height, channels: 3, background: { r: grey, g: grey, b: grey } } })
      .jpeg()
      .toBuffer(),
  );
}

const analysis = (depth: number, confidence: number): Analysis => ({
  wear: depth >= 7 ? 'new' : depth >= 5 ? 'good' : depth >= 3 ? 'medium' : depth >= 1.6 ? 'worn' : 'critical',
  confidence,
  estimatedDepthMm: depth,
  depthRangeMm: { min: Math.max(0, depth - 1), max: depth + 1 },
  treadHealthIndex: 0,
  isPreliminary: false,
  modelAlignment: 90,
  twiConsensusCount: 0,
  depth32nds: 0,
  modelVersion: 'fake',
});

/** Dark photos: no tire; mid-grey: tread not visible; brighter: a depth of (grey − 100) / 10 mm. */
const fake: Analyzer = {
  modelVersion: 'fake',
  async analyze(request: AnalyzeRequest) {
    const { channels } = await sharp(request.image).stats();
    const grey = channels[0]!.mean;
    if (grey < 40) throw new AppError('NO_TIRE_DETECTED', 'none');
    if (grey < 90) throw new AppError('TREAD_NOT_VISIBLE', 'side');
    return { analysis: analysis(Math.round((grey - 100) / 10), 0.9) };
  },
  async close() {},
};

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tirewear-realdata-'));
  const web = path.join(root, 'web-good-defective');
  await photo(path.join(web, 'good', 'a.jpg'), 180, 200, 200); // 8 mm, enlarged from 200 px
  await photo(path.join(web, 'good', 'b.png'), 150); // 5 mm
  await photo(path.join(web, 'defective', 'c.jpg'), 115); // 2 mm: right
  await photo(path.join(web, 'defective', 'd.jpg'), 160); // 6 mm at 0.9: a dangerous answer
  await photo(path.join(web, 'defective', 'e.jpg'), 20); // refused: no tire
  await writeFile(path.join(web, 'good', 'notes.txt'), 'not a photo');
  const mich = path.join(root, 'michelin-twi');
  await photo(path.join(mich, 'images', '1.jpg'), 170);
  await photo(path.join(mich, 'images', '2.jpg'), 150);
  await photo(path.join(mich, 'images', '3.jpg'), 120);
  await writeFile(
    path.join(mich, 'labels.csv'),
    'file,twiRemainingPct,wearMadeBy,fold\nimages/1.jpg,100,aucune,0\nimages/2.jpg,50,raboteuse,1\n"images/3.jpg",0,lime,2\n',
  );
  const veh = path.join(root, 'vehicles-wheels');
  await photo(path.join(veh, 'images', 'train', 'car.jpg'), 60, 400, 300);
  await mkdir(path.join(veh, 'labels', 'train'), { recursive: true });
  // one wheel low on the left: the two upper quarters and the lower right stay free; two are kept
  await writeFile(path.join(veh, 'labels', 'train', 'car.txt'), '0 0.2 0.8 0.2 0.2\n');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the real-photo evaluation', () => {
  it('reads each set as it is: folders, labels.csv, YOLO boxes', async () => {
    const sets = await loadRealSets(root);
    expect(sets.map((s) => s.name)).toEqual(['web-good-defective', 'michelin-twi', 'vehicles-wheels', 'vehicles-wheels-outside']);
    const web = sets[0]!.samples;
    expect(web.map((s) => [path.basename(s.file), s.truth])).toEqual([
      ['a.jpg', 'usable'],
      ['b.png', 'usable'],
      ['c.jpg', 'bad'],
      ['d.jpg', 'bad'],
      ['e.jpg', 'bad'],
    ]);
    expect(sets[1]!.samples.map((s) => [s.pct, s.truth, s.madeBy])).toEqual([
      [100, 'usable', 'new'],
      [50, 'between', 'planed'],
      [0, 'bad', 'lime'], // a kind the loader does not know keeps its own name
    ]);
    expect(sets[2]!.samples.map((s) => s.truth)).toEqual(['vehicle']);
    expect(sets[3]!.samples.map((s) => s.box)).toEqual([
      [0, 0, 0.5, 0.5],
      [0.5, 0, 1, 0.5],
    ]);
  });

  it('keeps only the quarters that touch no wheel', () => {
    expect(quartersWithoutWheels([])).toHaveLength(2);
    expect(quartersWithoutWheels([[0.1, 0.1, 0.9, 0.9]])).toEqual([]);
    expect(quartersWithoutWheels([[0.55, 0.55, 0.95, 0.95]])).toEqual([
      [0, 0, 0.5, 0.5],
      [0.5, 0, 1, 0.5],
    ]);
  });

  it('ranks with ties averaged, and says NaN when a side does not vary', () => {
    expect(spearman([1, 2, 3], [10, 20, 30])).toBeCloseTo(1);
    expect(spearman([1, 2, 3], [30, 20, 10])).toBeCloseTo(-1);
    expect(spearman([1, 2, 3, 4], [0, 0, 1, 1])).toBeCloseTo(0.894, 3);
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNaN();
  });

  it('measures worn vs usable, dangerous answers, the order and the refusals through the analyzer', async () => {
    const sets = await loadRealSets(root);
    const web = await analyzeReal(fake, sets[0]!.samples);
    expect(web.map((o) => o.error)).toEqual([null, null, null, null, 'NO_TIRE_DETECTED']);
    expect(web[0]!.upscaled).toBe(true); // 200 px: enlarged to the service's 256
    const f = realFigures('web-good-defective', web, { scoredBy: 'held out', modelVersion: 'fake', bootstrap: 50 });
    expect(f.answered).toBe(4);
    expect(f.refusedNoTire).toBe(1);
    expect(f.upscaled).toBe(1);
    // usable 2/2 right, bad 1/2 right among the answered
    expect(f.wornVsUsable?.balancedAccuracy).toBeCloseTo(0.75);
    expect(f.wornVsUsable?.badRecall).toBeCloseTo(0.5);
    // one of the three worn tires answered usable at 0.9
    expect(f.dangerous).toEqual({ n: 3, share: 1 / 3 });
    const mich = realFigures('michelin-twi', await analyzeReal(fake, sets[1]!.samples), { scoredBy: 'held out', modelVersion: 'fake', bootstrap: 50 });
    expect(mich.spearman?.rho).toBeCloseTo(1);
    const car = await analyzeReal(fake, sets[2]!.samples);
    expect(car[0]!.error).toBe('TREAD_NOT_VISIBLE');
    const table = formatRealTable([f, mich]);
    expect(table).toContain('| web-good-defective (1 enlarged to 256 px) | held out (fake) | 5 |');
    expect(table).toContain('33.3 % of 3');
  });

  it('reads michelin-twi by how the wear was made: the "rough = worn" check', () => {
    const o = (madeBy: string, pct: number, depth: number | null): RealOutcome => ({
      sample: { file: `${madeBy}-${pct}.jpg`, truth: pct <= 25 ? 'bad' : pct >= 75 ? 'usable' : 'between', pct, madeBy },
      analysis: depth === null ? null : analysis(depth, 0.7),
      error: depth === null ? 'TREAD_NOT_VISIBLE' : null,
    });
    // a reader that learned roughness: the planed 75 % tires read as shallow as the planed 50 % ones
    const outcomes = [
      o('new', 100, 8),
      o('new', 100, 8),
      o('road-worn', 90, 7),
      o('road-worn', 90, 6),
      o('road-worn', 80, 6),
      o('planed', 75, 3),
      o('planed', 75, 3),
      o('planed', 50, 3),
      o('planed', 50, 2),
      o('planed', 25, null),
      o('planed', 0, 1),
    ];
    const w = realFigures('michelin-twi', outcomes, { scoredBy: 'held out', modelVersion: 'fake', bootstrap: 0 }).wearMade!;
    // the fake's interval is the depth ± 1 mm; the gauge allows 1.6 + pct/100 × (7..8 − 1.6) mm
    expect(gaugeDepthMm(50)[0]).toBeCloseTo(4.3);
    expect(gaugeDepthMm(50)[1]).toBeCloseTo(4.8);
    expect(w.groups.map((g) => g.intervalHolds)).toEqual([1, 1, 1, 0, 0, null, 1]);
    expect(w.intervalHolds).toBeCloseTo(6 / 10);
    expect(w.groups.map((g) => [g.madeBy, g.pct, g.n, g.answered, g.medianDepthMm, g.readNotUsable])).toEqual([
      ['new', 100, 2, 2, 8, 0],
      ['road-worn', 90, 2, 2, 6.5, 0],
      ['road-worn', 80, 1, 1, 6, 0],
      ['planed', 75, 2, 2, 3, 0],
      ['planed', 50, 2, 2, 2.5, 0.5],
      ['planed', 25, 1, 0, null, null],
      ['planed', 0, 1, 1, 1, 1],
    ]);
    expect(w.orderNotPlaned?.n).toBe(5);
    expect(w.orderNotPlaned?.rho).toBeCloseTo(spearman([8, 8, 7, 6, 6], [100, 100, 90, 90, 80]));
    expect(w.orderPlaned).toEqual({ n: 5, rho: spearman([3, 3, 3, 2, 1], [75, 75, 50, 50, 0]) });
    expect(w.roadOverPlaned75).toEqual({ n: [3, 2], auc: 1 });
    expect(w.planed75OverPlaned50).toEqual({ n: [2, 2], auc: 0.75 });
    const table = formatRealTable([realFigures('michelin-twi', outcomes, { scoredBy: 'held out', modelVersion: 'fake', bootstrap: 0 })]);
    expect(table).toContain('**michelin-twi by how the wear was made**');
    expect(table).toContain('| planed | 25 % | 1 | 0.0 % |  |  |  |');
    expect(table).toContain(
      'reaches the depth the gauge allows (1.6 + gauge left × (new − 1.6) mm, new 7–8 mm: realdata/README.md) for 60.0 % of the answered',
    );
    expect(table).toContain('planed 75 % read deeper than planed 50 % (≈ 1.5 mm deeper): 0.750 (2 against 2)');
    // a set without the column has no such section
    expect(
      realFigures('x', [{ ...outcomes[0]!, sample: { file: 'a.jpg', truth: 'usable', pct: 100 } }], {
        scoredBy: 'held out',
        modelVersion: 'fake',
        bootstrap: 0,
      }).wearMade,
    ).toBeNull();
  });

  it('counts pairs with ties as half', () => {
    expect(deeperShare([2, 3], [1])).toBe(1);
    expect(deeperShare([1], [1])).toBe(0.5);
    expect(deeperShare([1, 2], [2, 3])).toBe(0.125);
    expect(deeperShare([], [1])).toBeNaN();
  });

  it('counts a file that cannot be read as the service would answer it, and goes on', async () => {
    const broken = path.join(root, 'broken.jpg');
    await writeFile(broken, 'not a jpeg at all');
    const out: RealOutcome[] = await analyzeReal(fake, [{ file: broken, truth: 'tread' }]);
    expect(out[0]!.analysis).toBeNull();
    expect(out[0]!.error).toMatch(/IMAGE_UNREADABLE|UNSUPPORTED_MEDIA_TYPE/);
  });
});
