import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { analysisInput, cropPixels, extendToModelShape, normalise, prepareFrameInput } from '../../src/core/analysis/preprocess.js';
import { treadBox, type CropSpec, type MaskMaps } from '../../src/core/analysis/mask.js';
import { checkImageHeader, decodeFrame } from '../../src/core/images/inspect.js';
import { FIXTURES } from './helpers.js';

// The .rgb files are what models/training/preprocess.py (PIL) feeds the networks in training;
// models/training/make_parity_fixtures.py writes them.
const PARITY = path.join(FIXTURES, 'parity');
const SIZE = 160;
const SPEC = { size: SIZE, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };
/** What the analyzer reads from uploaded bytes alone (OnnxAnalyzer.analyze: one decodeFrame, then prepareFrameInput). */
const analysed = (name: string) => analysisInput({ image: readFileSync(path.join(PARITY, name)), verbose: false }, SPEC);

function compare(name: string, actual: Buffer, side = SIZE): { mean: number; max: number } {
  const expected = readFileSync(path.join(PARITY, `${name}.${side}x${side}.rgb`));
  expect(actual.length).toBe(expected.length);
  let sum = 0;
  let max = 0;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i]! - expected[i]!);
    sum += d;
    max = Math.max(max, d);
  }
  return { mean: sum / expected.length, max };
}

describe('preprocessing parity with training', () => {
  for (const name of ['tread.jpg', 'tread.png', 'tread-exif6.jpg']) {
    it(`gives the training tensor for ${name} (mean |Δ| ≤ 0.5/255, max ≤ 8/255)`, async () => {
      const { input } = await analysed(name);
      const { mean, max } = compare(name, input.pixels);
      expect(mean).toBeLessThanOrEqual(0.5);
      expect(max).toBeLessThanOrEqual(8);
    });
  }

  it('gives calibration\u2019s input for a large photo: the same 533 x 400 frame, then within 1/255 on average', async () => {
    // models/training/preprocess.app_frame makes the app's frame (libjpeg's 1/2 decode, then
    // sharp's linear kernel) with Pillow's scaled decode and triangle filter for the large
    // calibration photos: close, not bit-identical (the 160 x 160 resize is sharp's here).
    const image = readFileSync(path.join(PARITY, 'tread-large.jpg'));
    const frame = await decodeFrame(image, await checkImageHeader(image));
    expect([frame.width, frame.height]).toEqual([533, 400]);
    const { pixels } = await prepareFrameInput(frame, SPEC);
    const { mean, max } = compare('tread-large.jpg', pixels);
    expect(mean).toBeLessThanOrEqual(1); // 0.44 measured (sharp 0.35.5, Pillow 12; the full decode gave 0.44 too)
    expect(max).toBeLessThanOrEqual(16); // 9 measured
  });

  it('applies EXIF orientation: the sideways-stored copy gives the upright tensor', async () => {
    const upright = (await analysed('tread.jpg')).input.pixels;
    const rotated = (await analysed('tread-exif6.jpg')).input.pixels;
    let sum = 0;
    for (let i = 0; i < upright.length; i++) sum += Math.abs(upright[i]! - rotated[i]!);
    expect(sum / upright.length).toBeLessThan(2);
  });

  it('reports the upright size of an EXIF-rotated upload', async () => {
    const { frame, input } = await analysed('tread-exif6.jpg');
    expect({ width: input.width, height: input.height }).toEqual({ width: 400, height: 300 });
    expect([frame.width, frame.height, frame.uprightWidth, frame.uprightHeight]).toEqual([400, 300, 400, 300]);
  });

  it('normalises to NCHW planes with the manifest mean and std', () => {
    const pixels = Buffer.alloc(SIZE * SIZE * 3);
    pixels[0] = 255; // R of the first pixel
    pixels[1] = 0; // G
    pixels[2] = 128; // B
    const t = normalise(pixels, SPEC);
    expect(t.length).toBe(3 * SIZE * SIZE);
    expect(t[0]).toBeCloseTo(1, 5);
    expect(t[SIZE * SIZE]).toBeCloseTo(-1, 5);
    expect(t[2 * SIZE * SIZE]).toBeCloseTo(128 / 127.5 - 1, 5);
  });
});

describe('the scan service’s one decode (a frame of 400-640 px) feeds the same tensor', () => {
  const fromFrame = async (data: Buffer) => {
    const frame = await decodeFrame(data, await checkImageHeader(data));
    return { frame, input: await prepareFrameInput(frame, SPEC) };
  };

  for (const name of ['tread.jpg', 'tread.png', 'tread-exif6.jpg']) {
    it(`matches the training tensor for ${name} within the parity tolerance`, async () => {
      const data = readFileSync(path.join(PARITY, name));
      const { input } = await fromFrame(data);
      const { mean, max } = compare(name, input.pixels);
      expect(mean).toBeLessThanOrEqual(0.5);
      expect(max).toBeLessThanOrEqual(8);
      const { autoOrient } = await sharp(data).metadata();
      expect({ width: input.width, height: input.height }).toEqual({ width: autoOrient.width, height: autoOrient.height });
    });
  }

  it('matches the direct decode of a 12-megapixel photo (both from libjpeg’s 1/8 scale)', async () => {
    const photo = await sharp(readFileSync(path.join(PARITY, 'tread.png')))
      .resize(4000, 3000, { fit: 'fill' })
      .jpeg({ quality: 92 })
      .toBuffer();
    const { frame, input } = await fromFrame(photo);
    expect([frame.width, frame.height, frame.uprightWidth, frame.uprightHeight]).toEqual([444, 333, 4000, 3000]);
    // the full-size photo stretched straight to 160 x 160 (shrink-on-load at 1/8 too)
    const direct = await sharp(photo)
      .autoOrient()
      .resize(SIZE, SIZE, { fit: 'fill', kernel: 'linear', fastShrinkOnLoad: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer();
    let sum = 0;
    let max = 0;
    for (let i = 0; i < direct.length; i++) {
      const d = Math.abs(direct[i]! - input.pixels[i]!);
      sum += d;
      max = Math.max(max, d);
    }
    expect(sum / direct.length).toBeLessThanOrEqual(0.5);
    expect(max).toBeLessThanOrEqual(8);
  });
});

describe('the tread crop (the regressor’s second look) matches training', () => {
  interface Case {
    mask: string;
    width: number;
    height: number;
    crop: CropSpec;
    box: [number, number, number, number] | null;
  }
  const fixture = JSON.parse(readFileSync(path.join(PARITY, 'crop.json'), 'utf8')) as {
    masks: Record<string, number[]>;
    side: number;
    cases: Case[];
    cropOfTreadJpg: [number, number, number, number];
    cropOfTreadPng: [number, number, number, number];
  };
  const mapsOf = (cells: number[]): MaskMaps => {
    const n = fixture.side * fixture.side;
    const treadProb = new Float32Array(n);
    for (const i of cells) treadProb[i] = 0.9;
    return { side: fixture.side, label: new Uint8Array(n), treadProb, depth: new Float32Array(n) };
  };
  const asBox = (b: [number, number, number, number] | null) => (b === null ? null : { left: b[0], top: b[1], width: b[2] - b[0], height: b[3] - b[1] });

  it(`treadBox gives preprocess.tread_box's pixel box in all 40 cases (masks × sizes × parameters)`, () => {
    expect(fixture.cases.length).toBe(40);
    expect(fixture.cases.some((c) => c.box === null)).toBe(true); // too few cells, too small a box
    for (const c of fixture.cases) {
      expect({ case: `${c.mask} ${c.width}x${c.height} m${c.crop.margin}`, box: treadBox(mapsOf(fixture.masks[c.mask]!), c.width, c.height, c.crop) }).toEqual({
        case: `${c.mask} ${c.width}x${c.height} m${c.crop.margin}`,
        box: asBox(c.box),
      });
    }
  });

  it('a box never leaves the image and is never more elongated than maxAspect unless the image edge cut it', () => {
    const crop: CropSpec = { margin: 0.08, maxAspect: 16 / 9, lowPercentile: 1, highPercentile: 99, minCells: 20, minSide: 16 };
    const side = fixture.side;
    const band = (rows: [number, number]) =>
      Array.from({ length: side * side }, (_, i) => i).filter(
        (i) => i % side >= 5 && i % side < 75 && Math.floor(i / side) >= rows[0] && Math.floor(i / side) < rows[1],
      );
    const centred = treadBox(mapsOf(band([36, 44])), 400, 300, crop)!; // room to widen: exactly maxAspect
    expect(centred.width / centred.height).toBeCloseTo(16 / 9, 1);
    const atEdge = treadBox(mapsOf(band([72, 80])), 400, 300, crop)!; // widened past the bottom edge: cut there
    expect(atEdge.top + atEdge.height).toBe(300);
    expect(atEdge.width / atEdge.height).toBeGreaterThan(16 / 9);
    for (const b of [centred, atEdge]) {
      expect(Math.min(b.left, b.top)).toBeGreaterThanOrEqual(0);
      expect(b.left + b.width).toBeLessThanOrEqual(400);
    }
  });

  it('cropPixels of the decoded frame gives the training crop within the parity tolerance', async () => {
    const { checkImageHeader, decodeFrame } = await import('../../src/core/images/inspect.js');
    const data = readFileSync(path.join(PARITY, 'tread.jpg'));
    const frame = await decodeFrame(data, await checkImageHeader(data));
    const box = treadBox(mapsOf(fixture.masks.ellipse!), frame.width, frame.height, {
      margin: 0.08,
      maxAspect: 16 / 9,
      lowPercentile: 1,
      highPercentile: 99,
      minCells: 20,
      minSide: 16,
    });
    expect(box).toEqual(asBox(fixture.cropOfTreadJpg));
    const { mean, max } = compare('tread.jpg.crop', cropPixels(frame, box!, SIZE));
    // what remains is the two JPEG decoders (the resampling itself is Pillow's to the bit: below)
    expect(mean).toBeLessThanOrEqual(0.5);
    expect(max).toBeLessThanOrEqual(8);
  });

  it('cropPixels is Pillow’s crop + bilinear resize to the bit (a PNG, an enlarging square crop)', async () => {
    const { checkImageHeader, decodeFrame } = await import('../../src/core/images/inspect.js');
    const data = readFileSync(path.join(PARITY, 'tread.png'));
    const frame = await decodeFrame(data, await checkImageHeader(data));
    const box = treadBox(mapsOf(fixture.masks.small!), frame.width, frame.height, {
      margin: 0.2,
      maxAspect: 1,
      lowPercentile: 1,
      highPercentile: 99,
      minCells: 20,
      minSide: 16,
    })!;
    expect(box).toEqual(asBox(fixture.cropOfTreadPng));
    expect(box.width).toBeLessThan(SIZE); // enlarged, where sharp's linear kernel would differ
    expect(compare('tread.png.crop', cropPixels(frame, box, SIZE))).toEqual({ mean: 0, max: 0 });
    // a crop reader with a larger input (models.crop.size): Pillow's resize to that side, to the bit
    expect(compare('tread.png.crop', cropPixels(frame, box, 224), 224)).toEqual({ mean: 0, max: 0 });
  });

  it('refuses a box outside the frame', () => {
    const frame = { data: Buffer.alloc(40 * 30 * 3), width: 40, height: 30, uprightWidth: 40, uprightHeight: 30 };
    expect(() => cropPixels(frame, { left: 30, top: 0, width: 20, height: 10 }, SIZE)).toThrow(/outside/);
  });
});

describe('a photo longer than the models were trained on', () => {
  /** A raw RGB frame whose every pixel encodes its own row and column. */
  function frame(width: number, height: number) {
    const data = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set([y % 256, x % 256, 7], (y * width + x) * 3);
    return { data, width, height, uprightWidth: width * 4, uprightHeight: height * 4 };
  }
  const pixel = (f: { data: Buffer; width: number }, x: number, y: number) => [...f.data.subarray((y * f.width + x) * 3, (y * f.width + x) * 3 + 3)];

  it('leaves 4:3, 3:4, 1:1 and anything up to 4:3 as it is', async () => {
    for (const [w, h] of [
      [400, 300],
      [300, 400],
      [360, 360],
      [640, 480],
      [401, 301],
    ] as const) {
      const f = frame(w, h);
      const out = await extendToModelShape(f);
      expect(out.frame).toBe(f);
      expect(out.content).toEqual({ left: 0, top: 0, width: w, height: h });
    }
  });

  it('extends a strip to 4:3 by mirroring it above and below (or left and right), the photo untouched in the middle', async () => {
    const strip = frame(300, 100);
    const { frame: out, content } = await extendToModelShape(strip);
    expect([out.width, out.height]).toEqual([300, 225]);
    expect(content).toEqual({ left: 0, top: 62, width: 300, height: 100 });
    expect([out.uprightWidth, out.uprightHeight]).toEqual([1200, 400]);
    for (const [x, y] of [
      [0, 0],
      [150, 50],
      [299, 99],
    ] as const)
      expect(pixel(out, x, y + 62)).toEqual(pixel(strip, x, y));
    // mirrored: the rows next to the photo repeat its edge rows, not grey bars
    expect(pixel(out, 10, 61)[0]).toBeLessThanOrEqual(1);
    expect(pixel(out, 10, 162)[0]).toBeGreaterThanOrEqual(98);
    const tall = await extendToModelShape(frame(90, 480));
    expect([tall.frame.width, tall.frame.height, tall.content.left]).toEqual([360, 480, 135]);
    // a panorama far longer than the extension is wide still fills it
    const panorama = await extendToModelShape(frame(640, 80));
    expect([panorama.frame.width, panorama.frame.height]).toEqual([640, 480]);
  });
});
