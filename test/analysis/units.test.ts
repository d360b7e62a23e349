import { describe, expect, it } from 'vitest';
import { BAND_32NDS, MM_PER_32ND, WEAR_CLASSES, wearForDepth, whole32nds } from '../../src/shared/units.js';

describe('shared units (the API and the counter UI use the same rules)', () => {
  it('puts a depth in the docs/API.md §2 band, edges included', () => {
    const cases: [number, string][] = [
      [0, 'critical'],
      [1.59, 'critical'],
      [1.6, 'worn'],
      [2.99, 'worn'],
      [3.0, 'medium'],
      [4.99, 'medium'],
      [5.0, 'good'],
      [6.99, 'good'],
      [7.0, 'new'],
      [12, 'new'],
    ];
    for (const [mm, band] of cases) expect(wearForDepth(mm), String(mm)).toBe(band);
  });

  it('gives a reading typed in 32nds back as typed, inside its own band (stored as mm to 0.1)', () => {
    for (let n = 0; n <= 37; n++) {
      const mm = Math.round(n * MM_PER_32ND * 10) / 10; // MeasurementForm's conversion
      expect(whole32nds(mm), `${n}/32`).toBe(n);
      const [low, high] = BAND_32NDS[wearForDepth(mm)];
      expect(n >= low && n <= high, `${n}/32 in ${wearForDepth(mm)}`).toBe(true);
    }
  });

  it('keeps the 32nds inside the band where plain rounding would leave it', () => {
    expect(whole32nds(1.4)).toBe(1); // critical, rounding says 2
    expect(whole32nds(2.8)).toBe(3); // worn, rounding says 4
    expect(whole32nds(5.0)).toBe(7); // good, rounding says 6
    expect(whole32nds(4.0)).toBe(5);
    expect(WEAR_CLASSES).toEqual(['new', 'good', 'medium', 'worn', 'critical']);
  });
});
