import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { normalise, prepareFrameInput, prepareInput, resizedPixels } from '../../src/core/analysis/preprocess.js';
import { FIXTURES } from './helpers.js';

// The .rgb files are what models/training/preprocess.py (PIL) feeds the networks in training;
// models/training/make_parity_fixtures.py writes them.
const PARITY = path.join(FIXTURES, 'parity');
const SIZE = 160;

function compare(name: string, actual: Buffer): { mean: number; max: number } {
  const expected = readFileSync(path.join(PARITY, `${name}.${SIZE}x${SIZE}.rgb`));
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
      const pixels = await resizedPixels(readFileSync(path.join(PARITY, name)), SIZE);
      const { mean, max } = compare(name, pixels);
      expect(mean).toBeLessThanOrEqual(0.5);
      expect(max).toBeLessThanOrEqual(8);
    });
  }

  it('applies EXIF orientation: the sideways-stored copy gives the upright tensor', async () => {
    const upright = await resizedPixels(readFileSync(path.join(PARITY, 'tread.jpg')), SIZE);
    const rotated = await resizedPixels(readFileSync(path.join(PARITY, 'tread-exif6.jpg')), SIZE);
    let sum = 0;
    for (let i = 0; i < upright.length; i++) sum += Math.abs(upright[i]! - rotated[i]!);
    expect(sum / upright.length).toBeLessThan(2);
  });

  it('reports the upright size of an EXIF-rotated upload', async () => {
    const input = await prepareInput(readFileSync(path.join(PARITY, 'tread-exif6.jpg')), { size: SIZE, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] });
    expect({ width: input.width, height: input.height }).toEqual({ width: 400, height: 300 });
  });

  it('normalises to NCHW planes with the manifest mean and std', () => {
    const pixels = Buffer.alloc(SIZE * SIZE * 3);
    pixels[0] = 255; // R of the first pixel
    pixels[1] = 0; // G
    pixels[2] = 128; // B
    const t = normalise(pixels, { size: SIZE, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] });
    expect(t.length).toBe(3 * SIZE * SIZE);
    expect(t[0]).toBeCloseTo(1, 5);
    expect(t[SIZE * SIZE]).toBeCloseTo(-1, 5);
    expect(t[2 * SIZE * SIZE]).toBeCloseTo(128 / 127.5 - 1, 5);
  });
});

describe('the scan service’s one decode (a frame of at most 640 px) feeds the same tensor', () => {
  const spec = { size: SIZE, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };
  const fromFrame = async (data: Buffer) => {
    const { checkImageHeader, decodeFrame } = await import('../../src/core/images/inspect.js');
    const frame = await decodeFrame(data, await checkImageHeader(data));
    return { frame, input: await prepareFrameInput(frame, spec) };
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

  it('matches the direct decode of a 12-megapixel photo (shrink-on-load at another factor)', async () => {
    const photo = await sharp(readFileSync(path.join(PARITY, 'tread.png')))
      .resize(4000, 3000, { fit: 'fill' })
      .jpeg({ quality: 92 })
      .toBuffer();
    const { frame, input } = await fromFrame(photo);
    expect([frame.width, frame.height, frame.uprightWidth, frame.uprightHeight]).toEqual([640, 480, 4000, 3000]);
    const direct = await resizedPixels(photo, SIZE);
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
