import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalise, prepareInput, resizedPixels } from '../../src/core/analysis/preprocess.js';
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
