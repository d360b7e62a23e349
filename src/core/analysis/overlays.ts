/**
 * verbose=1 extras (docs/API.md §2): PNG overlays the size of the analysed frame (the upright upload as
 * decoded for the networks: 400-640 px on the long side, the upload's own size when smaller), with
 * the upload's aspect ratio, so they stretch onto the photo exactly; and located points in the
 * uploaded image's pixel coordinates.
 */
import sharp from 'sharp';
import type { AnalysisPoint, VerboseExtras } from './analyzer.js';
import { cellOnPhoto } from './preprocess.js';
import { findTwiBars, grooveRegions, MASK_GROOVE, MASK_TREAD, MASK_TWI, type MaskMaps } from './mask.js';

/** Depth colour: red at 0 mm, amber at the 1.6 mm limit to 3 mm, green from 7 mm. */
export function depthColour(mm: number): [number, number, number] {
  const stops: [number, [number, number, number]][] = [
    [0, [200, 0, 0]],
    [1.6, [255, 80, 0]],
    [3, [255, 190, 0]],
    [5, [170, 220, 40]],
    [7, [0, 180, 60]],
  ];
  if (mm <= 0) return stops[0]![1];
  for (let i = 1; i < stops.length; i++) {
    const [d1, c1] = stops[i]!;
    const [d0, c0] = stops[i - 1]!;
    if (mm <= d1) {
      const t = (mm - d0) / (d1 - d0);
      return [0, 1, 2].map((k) => Math.round(c0[k]! + (c1[k]! - c0[k]!) * t)) as [number, number, number];
    }
  }
  return stops[stops.length - 1]![1];
}

const MASK_COLOURS: Record<number, [number, number, number, number]> = {
  [MASK_TREAD]: [160, 160, 160, 90],
  [MASK_GROOVE]: [30, 120, 255, 170],
  [MASK_TWI]: [255, 30, 30, 230],
};

async function png(rgba: Buffer, side: number, frame: Size, content: Box, kernel: 'nearest' | 'linear'): Promise<string> {
  let image = sharp(rgba, { raw: { width: side, height: side, channels: 4 } }).resize(frame.width, frame.height, { fit: 'fill', kernel });
  if (content.width !== frame.width || content.height !== frame.height) {
    // an extended frame: only the photo's part, so the overlay still stretches onto the photo exactly
    image = sharp(await image.raw().toBuffer(), { raw: { width: frame.width, height: frame.height, channels: 4 } }).extract(content);
  }
  const data = await image.png({ compressionLevel: 6 }).toBuffer();
  return `data:image/png;base64,${data.toString('base64')}`;
}

type Size = { width: number; height: number };
type Box = Size & { left: number; top: number };

/**
 * `upload`: the upright upload's size (points are in its pixels); `frame`: the analysed frame's;
 * `content`: where the photo lies in it (preprocess.extendToModelShape; the whole frame unless a
 * long photo was extended). Overlays are the content's size; points outside it (on the mirrored
 * extension) are left out.
 */
export async function buildVerbose(
  maps: MaskMaps,
  upload: Size,
  frame: Size,
  content: Box = { left: 0, top: 0, width: frame.width, height: frame.height },
  /** The maps points are found on (a long photo's own cells: mask.onlyWhere); the overlays show `maps`. */
  pointMaps: MaskMaps = maps,
): Promise<VerboseExtras> {
  const { side } = maps;
  const n = side * side;
  const heat = Buffer.alloc(n * 4);
  const mask = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const p = maps.treadProb[i]!;
    const [r, g, b] = depthColour(maps.depth[i]!);
    heat.set([r, g, b, p > 0.5 ? Math.round(200 * p) : 0], i * 4);
    mask.set(MASK_COLOURS[maps.label[i]!] ?? [0, 0, 0, 0], i * 4);
  }
  const [depthHeatmap, maskPng] = await Promise.all([png(heat, side, frame, content, 'linear'), png(mask, side, frame, content, 'nearest')]);

  /** A map cell's centre in the upload's pixels; null on a mirrored extension. */
  const toUpload = (cx: number, cy: number): { x: number; y: number } | null => {
    const at = cellOnPhoto(cx, cy, side, frame, content);
    return at && { x: Math.round((at.x / content.width) * upload.width), y: Math.round((at.y / content.height) * upload.height) };
  };
  const points: AnalysisPoint[] = [];
  for (const b of findTwiBars(pointMaps)) {
    const at = toUpload(b.cx, b.cy);
    if (at) points.push({ kind: 'twi', ...at, confirmed: b.confirmed });
  }
  grooveRegions(pointMaps).forEach((g, index) => {
    const at = toUpload(g.ax, g.ay);
    // no depth: the per-groove readings have no skill (Analysis.grooves)
    if (at) points.push({ kind: 'groove', ...at, index });
  });
  return { overlays: { depthHeatmap, mask: maskPng }, points };
}
