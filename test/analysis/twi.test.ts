import { describe, expect, it } from 'vitest';
import { findTwiBars, grooveRegions, MASK_GROOVE, MASK_TREAD, MASK_TWI, onlyWhere, type MaskMaps } from '../../src/core/analysis/mask.js';

const SIDE = 40;

/**
 * A tread filling the frame with main grooves one cell wide at `columns` (vertical, or horizontal
 * at those rows with `turned`), and one-cell TWI bars at [groove column, row] pairs.
 */
function tread(columns: number[], bars: Array<[number, number]>, turned = false): MaskMaps {
  const n = SIDE * SIDE;
  const label = new Uint8Array(n).fill(MASK_TREAD);
  const at = (x: number, y: number) => (turned ? x * SIDE + y : y * SIDE + x);
  for (const x of columns) for (let y = 0; y < SIDE; y++) label[at(x, y)] = MASK_GROOVE;
  for (const [x, y] of bars) label[at(x, y)] = MASK_TWI;
  return { side: SIDE, label, treadProb: new Float32Array(n).fill(0.95), depth: new Float32Array(n).fill(5) };
}

const confirmed = (maps: MaskMaps) => findTwiBars(maps).filter((b) => b.confirmed).length;

describe('TWI bars counted in twiConsensusCount', () => {
  it('counts bars in different main grooves that line up across the tread', () => {
    const linedUp: Array<[number, number]> = [
      [8, 15],
      [20, 15],
      [32, 16],
    ];
    expect(confirmed(tread([8, 20, 32], linedUp))).toBe(3);
    // the same with the grooves running across the frame
    expect(confirmed(tread([8, 20, 32], linedUp, true))).toBe(3);
  });

  it('does not count a bar no other groove agrees with', () => {
    expect(confirmed(tread([8, 20, 32], [[8, 15]]))).toBe(0);
    // bars in two grooves, far apart along them
    expect(
      confirmed(
        tread(
          [8, 20, 32],
          [
            [8, 5],
            [20, 30],
          ],
        ),
      ),
    ).toBe(0);
    // two bars in one groove, one above the other
    expect(
      confirmed(
        tread(
          [8, 20, 32],
          [
            [8, 15],
            [8, 17],
          ],
        ),
      ),
    ).toBe(0);
  });

  it('does not count a blob that does not lie across a main groove', () => {
    const maps = tread([8, 20, 32], [[20, 15]]);
    maps.label[15 * SIDE + 14] = MASK_TWI; // beside the grooves, in the rib, on the same line
    expect(findTwiBars(maps).map((b) => b.confirmed)).toEqual([false, false]);
  });

  it('counts at most two bars per main groove found', () => {
    const rows = [5, 15, 25, 35];
    const bars = [8, 32].flatMap((x) => rows.map((y) => [x, y] as [number, number]));
    expect(confirmed(tread([8, 32], bars))).toBe(4);
    expect(confirmed(tread([8, 32], bars.slice(0, 2).concat(bars.slice(4, 6))))).toBe(4);
  });
});

describe('one segmentation, read once', () => {
  it('finds the bars and grooves of a segmentation once, however many readers ask (result, cap, overlay)', () => {
    const maps = tread(
      [8, 20, 32],
      [
        [8, 15],
        [20, 15],
      ],
    );
    const first = findTwiBars(maps);
    expect(findTwiBars(maps)).toBe(first);
    expect(grooveRegions(maps)).toBe(grooveRegions(maps));
    // another segmentation, even an equal one, is read afresh
    const other = tread(
      [8, 20, 32],
      [
        [8, 15],
        [20, 15],
      ],
    );
    expect(findTwiBars(other)).not.toBe(first);
    expect(findTwiBars(other)).toEqual(first);
  });
});

describe('on a long photo extended by its mirror image', () => {
  it('a bar is not confirmed by its own reflection: bars are looked for on the photo alone (onlyWhere)', () => {
    // a 4:1 strip extended to 4:3: the photo is rows 13.3–26.7 of the 40-row map, a horizontal
    // groove across it at row 20 with one bar; the extension above and below mirrors the photo
    const photoRows = (cy: number) => cy >= 14 && cy <= 26;
    const photo = tread([20], [[20, 20]], true);
    const extended: MaskMaps = { ...photo, label: Uint8Array.from(photo.label) };
    for (let cy = 0; cy < SIDE; cy++) {
      if (photoRows(cy)) continue;
      const source = cy < 14 ? 27 - cy : 53 - cy; // the reflection about the photo's edges
      for (let cx = 0; cx < SIDE; cx++) extended.label[cy * SIDE + cx] = photo.label[Math.min(26, Math.max(14, source)) * SIDE + cx]!;
    }
    const alone = onlyWhere(photo, (_cx, cy) => photoRows(cy));
    const withMirror = confirmed(extended);
    const onPhoto = confirmed(onlyWhere(extended, (_cx, cy) => photoRows(cy)));
    expect(onPhoto).toBe(confirmed(alone));
    expect(withMirror).toBeGreaterThanOrEqual(onPhoto);
    // the cells kept are untouched, the rest are nothing
    const kept = onlyWhere(extended, (_cx, cy) => photoRows(cy));
    expect(kept.label[20 * SIDE + 20]).toBe(MASK_TWI);
    expect(kept.label[2 * SIDE + 20]).toBe(0);
    expect(kept.treadProb[2 * SIDE + 20]).toBe(0);
    expect(kept.depth).toBe(extended.depth);
    expect(extended.label[2 * SIDE + 20]).not.toBe(0); // the input is not changed
  });
});
