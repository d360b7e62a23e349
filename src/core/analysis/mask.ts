/**
 * The segmentation network's half-resolution maps and what is read off them:
 * main-groove regions (located: 'groove' points) and TWI bars
 * (the detector's blobs, confirmed only where they sit inside a main groove).
 */
export const MASK_NONE = 0;
export const MASK_TREAD = 1;
export const MASK_GROOVE = 2;
export const MASK_TWI = 3;

export interface MaskMaps {
  /** Grid side (the maps are side x side, row-major). */
  side: number;
  /** Most likely class per cell. */
  label: Uint8Array;
  /** Probability that a cell shows tread of any kind (tread, groove or TWI). */
  treadProb: Float32Array;
  /** Dense local main-groove depth, mm. */
  depth: Float32Array;
}

/**
 * The maps with every cell for which `keep` is false set to nothing (label none, no tread):
 * a long photo's mirrored extension (preprocess.extendToModelShape), so that wear bars and
 * grooves are found on the photo alone — a bar must not be confirmed by its own reflection.
 */
export function onlyWhere(maps: MaskMaps, keep: (cx: number, cy: number) => boolean): MaskMaps {
  const label = Uint8Array.from(maps.label);
  const treadProb = Float32Array.from(maps.treadProb);
  for (let cy = 0; cy < maps.side; cy++) {
    for (let cx = 0; cx < maps.side; cx++) {
      if (keep(cx, cy)) continue;
      label[cy * maps.side + cx] = MASK_NONE;
      treadProb[cy * maps.side + cx] = 0;
    }
  }
  return { side: maps.side, label, treadProb, depth: maps.depth };
}

export function mapsFromSeg(probs: Float32Array, depth: Float32Array, side: number): MaskMaps {
  const n = side * side;
  const label = new Uint8Array(n);
  const treadProb = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let c = 1; c < 4; c++) if (probs[c * n + i]! > probs[best * n + i]!) best = c;
    label[i] = best;
    treadProb[i] = 1 - probs[i]!;
  }
  return { side, label, treadProb, depth: depth.slice(0, n) };
}

export interface Region {
  cells: number[];
  /** Centroid, in grid cells. */
  cx: number;
  cy: number;
  /** The region's own cell nearest the centroid (a curved groove's centroid can lie off the groove). */
  ax: number;
  ay: number;
}

function regions(maps: MaskMaps, accept: (label: number) => boolean, minCells: number): Region[] {
  const { side, label } = maps;
  const seen = new Uint8Array(side * side);
  const out: Region[] = [];
  for (let start = 0; start < label.length; start++) {
    if (seen[start] || !accept(label[start]!)) continue;
    const cells: number[] = [];
    const stack = [start];
    seen[start] = 1;
    while (stack.length > 0) {
      const i = stack.pop()!;
      cells.push(i);
      const x = i % side;
      const y = (i - x) / side;
      const next = [x > 0 ? i - 1 : -1, x < side - 1 ? i + 1 : -1, y > 0 ? i - side : -1, y < side - 1 ? i + side : -1];
      for (const j of next) {
        if (j >= 0 && !seen[j] && accept(label[j]!)) {
          seen[j] = 1;
          stack.push(j);
        }
      }
    }
    if (cells.length < minCells) continue;
    const cx = cells.reduce((s, i) => s + (i % side), 0) / cells.length;
    const cy = cells.reduce((s, i) => s + Math.floor(i / side), 0) / cells.length;
    let anchor = cells[0]!;
    let best = Infinity;
    for (const i of cells) {
      const d = ((i % side) - cx) ** 2 + (Math.floor(i / side) - cy) ** 2;
      if (d < best) [best, anchor] = [d, i];
    }
    out.push({ cells, cx, cy, ax: anchor % side, ay: Math.floor(anchor / side) });
  }
  return out;
}

/**
 * One computation per segmentation: a verbose analysis reads the grooves and the bars for the
 * result (twiConsensusCount), for the TWI cap and again for the overlay points. A segmentation is
 * never changed once the segmenter has made it.
 */
function oncePerMaps<T>(compute: (maps: MaskMaps) => T): (maps: MaskMaps) => T {
  const seen = new WeakMap<MaskMaps, T>();
  return (maps) => {
    if (!seen.has(maps)) seen.set(maps, compute(maps));
    return seen.get(maps)!;
  };
}

/**
 * Main grooves (with the TWI bars inside them), left to right, largest six. Located only: their
 * depths are not read from the dense map (Analysis.grooves says why).
 */
export const grooveRegions: (maps: MaskMaps) => readonly Region[] = oncePerMaps((maps) =>
  regions(maps, (l) => l === MASK_GROOVE || l === MASK_TWI, 12)
    .sort((a, b) => b.cells.length - a.cells.length)
    .slice(0, 6)
    .sort((a, b) => a.cx - b.cx),
);

export interface TwiBar extends Region {
  /**
   * Counted in twiConsensusCount: a bar across a main groove (groove cells on at least two sides)
   * that a bar in another main groove lines up with across the tread (consensus), at most two per
   * main groove found.
   */
  confirmed: boolean;
}

/** Along the grooves, bars in different grooves this many cells apart or fewer line up. */
const CONSENSUS_ALONG = 2.5;
/** Across the grooves, two bars at least this many cells apart lie in different grooves. */
const CONSENSUS_ACROSS = 5;
/**
 * At most this many bars per main groove found: a tire carries about six around its circumference
 * in each main groove (TIRES.md), and a photo sees at most a third of it.
 */
const BARS_PER_GROOVE = 2;

/** The unit vector along the main grooves: the principal axis of the groove and bar cells. */
function grooveAxis(maps: MaskMaps): [number, number] | null {
  const { side, label } = maps;
  let n = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < label.length; i++) {
    if (label[i] !== MASK_GROOVE && label[i] !== MASK_TWI) continue;
    const x = i % side;
    const y = (i - x) / side;
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
  }
  if (n < 10) return null;
  const [vx, vy, cxy] = [sxx / n - (sx / n) ** 2, syy / n - (sy / n) ** 2, sxy / n - (sx / n) * (sy / n)];
  // the larger eigenvalue's eigenvector of [[vx, cxy], [cxy, vy]]
  const angle = 0.5 * Math.atan2(2 * cxy, vx - vy);
  return [Math.cos(angle), Math.sin(angle)];
}

/**
 * The segmenter's TWI blobs, and which of them count as found and confirmed. The geometry alone (a
 * small blob lying across a main groove) confirmed bars in 86 % of held-out photos with none in
 * sight; real wear bars sit at the same places around the tire in every main groove, so a bar now
 * counts only when a bar in another main groove lines up with it across the tread, and never more
 * than two per main groove found (models/README.md, Known limits: the count is still weak evidence).
 */
export const findTwiBars: (maps: MaskMaps) => readonly Readonly<TwiBar>[] = oncePerMaps((maps) => {
  const { side, label } = maps;
  const bars = regions(maps, (l) => l === MASK_TWI, 1).map((r) => {
    const sides = new Set<string>();
    for (const i of r.cells) {
      const x = i % side;
      const y = (i - x) / side;
      for (const [dx, dy, name] of [
        [-2, 0, 'l'],
        [2, 0, 'r'],
        [0, -2, 'u'],
        [0, 2, 'd'],
      ] as const) {
        const nx = x + dx;
        const ny = y + dy;
        if (nx >= 0 && ny >= 0 && nx < side && ny < side && label[ny * side + nx] === MASK_GROOVE) sides.add(name);
      }
    }
    const plausibleSize = r.cells.length <= (side * side) / 100;
    return { ...r, across: plausibleSize && sides.size >= 2, confirmed: false };
  });
  const axis = grooveAxis(maps);
  const across = bars.filter((b) => b.across);
  if (axis && across.length >= 2) {
    const [gx, gy] = axis;
    const along = (b: TwiBar) => b.cx * gx + b.cy * gy;
    const sideways = (b: TwiBar) => -b.cx * gy + b.cy * gx;
    for (let i = 0; i < across.length; i++) {
      for (let j = i + 1; j < across.length; j++) {
        const [a, b] = [across[i]!, across[j]!];
        if (Math.abs(along(a) - along(b)) <= CONSENSUS_ALONG && Math.abs(sideways(a) - sideways(b)) >= CONSENSUS_ACROSS) {
          a.confirmed = b.confirmed = true;
        }
      }
    }
    // the cap: the largest confirmed blobs first (a real bar covers a groove's width)
    const cap = BARS_PER_GROOVE * grooveRegions(maps).length;
    bars
      .filter((b) => b.confirmed)
      .sort((a, b) => b.cells.length - a.cells.length)
      .slice(cap)
      .forEach((b) => (b.confirmed = false));
  }
  return bars.map(({ across: _across, ...bar }): TwiBar => bar);
});

/** Where the regressor takes its second look (manifest calibration.crop, models/training/preprocess.py CROP). */
export interface CropSpec {
  /** Added on each side, as a share of the box's width and height. */
  margin: number;
  /** The longer side at most this many times the shorter (the crop is stretched to a square). */
  maxAspect: number;
  /** Percentiles of the tread cells' coordinates that bound the box (stray cells fall outside). */
  lowPercentile: number;
  highPercentile: number;
  /** Fewer tread cells than this: no box. */
  minCells: number;
  /** A box narrower or shorter than this many pixels: no box. */
  minSide: number;
}

export interface PixelBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** numpy's default (linear) percentile of sorted values. */
function percentileSorted(sorted: number[], p: number): number {
  const pos = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(pos);
  return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (pos - lo);
}

/**
 * The box around the tread in a width x height image, from the cells the segmenter sees as tread
 * (probability > 0.5): the twin of preprocess.tread_box in training, so the crop the regressor
 * reads here is the one it was calibrated on.
 */
export function treadBox(maps: MaskMaps, width: number, height: number, crop: CropSpec): PixelBox | null {
  const { side } = maps;
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < maps.treadProb.length; i++) {
    if (maps.treadProb[i]! > 0.5) {
      xs.push(i % side);
      ys.push(Math.floor(i / side));
    }
  }
  if (xs.length < crop.minCells) return null;
  xs.sort((a, b) => a - b); // ys are already in order (row-major scan)
  let x0 = (percentileSorted(xs, crop.lowPercentile) / side) * width;
  let x1 = ((percentileSorted(xs, crop.highPercentile) + 1) / side) * width;
  let y0 = (percentileSorted(ys, crop.lowPercentile) / side) * height;
  let y1 = ((percentileSorted(ys, crop.highPercentile) + 1) / side) * height;
  const mw = (x1 - x0) * crop.margin;
  const mh = (y1 - y0) * crop.margin;
  [x0, x1, y0, y1] = [x0 - mw, x1 + mw, y0 - mh, y1 + mh];
  const bw = x1 - x0;
  const bh = y1 - y0;
  if (bw > crop.maxAspect * bh) {
    const e = bw / crop.maxAspect - bh;
    [y0, y1] = [y0 - e / 2, y1 + e / 2];
  } else if (bh > crop.maxAspect * bw) {
    const e = bh / crop.maxAspect - bw;
    [x0, x1] = [x0 - e / 2, x1 + e / 2];
  }
  const left = Math.max(0, Math.floor(x0));
  const top = Math.max(0, Math.floor(y0));
  const right = Math.min(width, Math.ceil(x1));
  const bottom = Math.min(height, Math.ceil(y1));
  if (right - left < crop.minSide || bottom - top < crop.minSide) return null;
  return { left, top, width: right - left, height: bottom - top };
}
