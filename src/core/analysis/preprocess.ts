/**
 * Image → model tensor, the Node twin of models/training/preprocess.py: the
 * EXIF-upright frame (one longer than 4:3 first mirror-extended to 4:3: extendToModelShape, a
 * step of the app's only, as training's photos were 4:3, 3:4 and 1:1) stretched to size x size
 * with a linear (triangle) filter,
 * RGB scaled to 0..1 and normalised per channel, NCHW. JPEG and WebP decode
 * with shrink-on-load (inspect.decodeFrame), so a 12-megapixel photo is never
 * decoded in full.
 */
import sharp from 'sharp';
import { AppError } from '../errors.js';
import { decodeFrame } from '../images/inspect.js';
import type { AnalyzeRequest, DecodedFrame } from './analyzer.js';
import type { PixelBox } from './mask.js';

export interface InputSpec {
  size: number;
  mean: number[];
  std: number[];
}

export interface ModelInput {
  /** 1 x 3 x size x size, normalised. */
  tensor: Float32Array;
  /** The resized RGB pixels (size x size x 3), kept for tests and overlays. */
  pixels: Buffer;
  /** Upright size of the uploaded image (EXIF orientation applied). */
  width: number;
  height: number;
}

const MAX_INPUT_PIXELS = 40_000_000;

function unreadable(cause: unknown): AppError {
  return new AppError('IMAGE_UNREADABLE', 'The image could not be decoded.', { cause });
}

/** Upright width and height from the header alone. */
export async function uprightSize(image: Buffer): Promise<{ width: number; height: number }> {
  try {
    const meta = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    return { width: meta.autoOrient.width, height: meta.autoOrient.height };
  } catch (error) {
    throw unreadable(error);
  }
}

export function normalise(pixels: Buffer, spec: InputSpec): Float32Array {
  const plane = spec.size * spec.size;
  if (pixels.length !== plane * 3) throw new Error(`expected ${plane * 3} bytes, got ${pixels.length}`);
  const out = new Float32Array(plane * 3);
  for (let c = 0; c < 3; c++) {
    const mean = spec.mean[c] ?? 0;
    const scale = 1 / (255 * (spec.std[c] ?? 1));
    const offset = mean / (spec.std[c] ?? 1);
    for (let i = 0; i < plane; i++) out[c * plane + i] = (pixels[i * 3 + c] ?? 0) * scale - offset;
  }
  return out;
}

/**
 * The model input from a decoded frame (inspect.decodeFrame: shrink-on-load to 400-640 px,
 * inspect.frameLongSide, then this linear resize to size x size): the training tensor within the
 * parity tolerance (test/analysis/preprocess.test.ts, against Pillow's fixtures).
 */
export async function prepareFrameInput(frame: DecodedFrame, spec: InputSpec): Promise<ModelInput> {
  const pixels = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(spec.size, spec.size, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return { tensor: normalise(pixels, spec), pixels, width: frame.uprightWidth, height: frame.uprightHeight };
}

/**
 * The longest side over the shortest that the models read as they are: their training photos
 * were 4:3, 3:4 and 1:1. A longer frame is mirror-extended to this shape (extendToModelShape).
 */
export const MODEL_MAX_ASPECT = 4 / 3;

/** Where the photo itself lies in an extended frame (frame pixels); the whole frame when not extended. */
export type ContentBox = PixelBox;

/**
 * A frame longer than MODEL_MAX_ASPECT (a strip, a 16:9 or panorama photo), its short side
 * extended on both sides by mirroring the photo to 4:3, instead of being squashed into the
 * square input: on the held-out tires cut to strips, depth MAE 1.00 → 0.95 mm at 16:9,
 * 1.06 → 0.99 at 2:1, 1.26 → 1.04 at 3:1 and 1.87 → 1.25 at 5:1 against squashing
 * (models/README.md, Known limits). Grey bars instead were worse than squashing (1.38 mm at 3:1)
 * and let 6 % of non-tires through. Other frames are returned as they are.
 */
export async function extendToModelShape(frame: DecodedFrame): Promise<{ frame: DecodedFrame; content: ContentBox }> {
  const { width, height } = frame;
  const whole = { left: 0, top: 0, width, height };
  const landscape = width >= height;
  const long = landscape ? width : height;
  const short = landscape ? height : width;
  if (long <= MODEL_MAX_ASPECT * short + 0.5) return { frame, content: whole };
  const extra = Math.round(long / MODEL_MAX_ASPECT) - short;
  const before = Math.floor(extra / 2);
  const after = extra - before;
  const { data, info } = await sharp(frame.data, { raw: { width, height, channels: 3 } })
    .extend(landscape ? { top: before, bottom: after, extendWith: 'mirror' } : { left: before, right: after, extendWith: 'mirror' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    frame: { ...frame, data, width: info.width, height: info.height },
    content: landscape ? { left: 0, top: before, width, height } : { left: before, top: 0, width, height },
  };
}

/**
 * A segmentation-map cell's centre (side x side cells over the whole frame) in the photo's own
 * pixels of the frame, measured from the content's corner; null when it lies on the mirrored
 * extension of a long photo.
 */
export function cellOnPhoto(
  cx: number,
  cy: number,
  side: number,
  frame: { width: number; height: number },
  content: ContentBox,
): { x: number; y: number } | null {
  const x = ((cx + 0.5) / side) * frame.width - content.left;
  const y = ((cy + 0.5) / side) * frame.height - content.top;
  return x < 0 || y < 0 || x > content.width || y > content.height ? null : { x, y };
}

/**
 * What an analysis reads: the frame the scan service already decoded, or one decode of the upload
 * to the same frame (shrink-on-load to 400-640 px; bytes-only callers such as `npm run eval`
 * and the benches), extended to the models' shape when it is longer (extendToModelShape), and the
 * model input made from it. The tread crop is cut from the same frame; `content` is where the
 * photo lies in it, for overlays and points.
 */
export async function analysisInput(request: AnalyzeRequest, spec: InputSpec): Promise<{ frame: DecodedFrame; content: ContentBox; input: ModelInput }> {
  const decoded = request.frame ?? (await decodeFrame(request.image, await uprightSize(request.image)));
  const { frame, content } = await extendToModelShape(decoded);
  return { frame, content, input: await prepareFrameInput(frame, spec) };
}

/** Pillow's fixed-point precision for 8-bit resampling (libImaging/Resample.c). */
const PRECISION_BITS = 32 - 8 - 2;

/** Pillow's bilinear (triangle) resampling weights from `inSize` pixels to `outSize`, fixed point. */
function pilCoefficients(inSize: number, outSize: number): { bounds: Int32Array; kernels: Int32Array; ksize: number } {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = filterScale; // the triangle's support is 1
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kernels = new Int32Array(outSize * ksize);
  const k = new Float64Array(ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const centre = (xx + 0.5) * scale;
    const xmin = Math.max(Math.trunc(centre - support + 0.5), 0);
    const count = Math.min(Math.trunc(centre + support + 0.5), inSize) - xmin;
    let total = 0;
    for (let x = 0; x < count; x++) {
      const t = Math.abs((x + xmin - centre + 0.5) / filterScale);
      k[x] = t < 1 ? 1 - t : 0;
      total += k[x]!;
    }
    for (let x = 0; x < ksize; x++) {
      const w = x < count && total !== 0 ? k[x]! / total : 0;
      kernels[xx * ksize + x] = w < 0 ? Math.trunc(-0.5 + w * (1 << PRECISION_BITS)) : Math.trunc(0.5 + w * (1 << PRECISION_BITS));
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = count;
  }
  return { bounds, kernels, ksize };
}

const clip8 = (v: number): number => {
  const r = Math.floor(v / (1 << PRECISION_BITS));
  return r < 0 ? 0 : r > 255 ? 255 : r;
};

/**
 * The box of a decoded frame stretched to size x size exactly as Pillow's
 * `img.crop(box).resize((size, size), BILINEAR)` does in training (preprocess.crop_input_u8): the
 * same triangle weights, pixel centres and fixed-point rounding, horizontal pass first. (sharp's
 * linear kernel places pixel centres differently when it enlarges, which a crop often needs: a
 * mean difference of 3/255 on the parity fixture.) Box and resampling took 2.5 ms for a 493 x 480
 * box of a 640 x 480 frame (models/NOTEBOOK.md, Speed).
 */
export function cropPixels(frame: DecodedFrame, box: PixelBox, size: number): Buffer {
  const { left, top, width, height } = box;
  if (left < 0 || top < 0 || width < 1 || height < 1 || left + width > frame.width || top + height > frame.height) {
    throw new Error(`crop box ${JSON.stringify(box)} outside the ${frame.width}x${frame.height} frame`);
  }
  const h = pilCoefficients(width, size);
  const v = pilCoefficients(height, size);
  // Only the rows the vertical pass reads go through the horizontal pass (as in Pillow).
  const firstRow = v.bounds[0]!;
  const lastRow = v.bounds[(size - 1) * 2]! + v.bounds[(size - 1) * 2 + 1]!;
  const rows = lastRow - firstRow;
  const mid = new Uint8Array(rows * size * 3);
  const half = 1 << (PRECISION_BITS - 1);
  const src = frame.data;
  for (let y = 0; y < rows; y++) {
    const rowStart = ((top + firstRow + y) * frame.width + left) * 3;
    for (let xx = 0; xx < size; xx++) {
      const xmin = h.bounds[xx * 2]!;
      const count = h.bounds[xx * 2 + 1]!;
      let r = half;
      let g = half;
      let b = half;
      for (let x = 0; x < count; x++) {
        const w = h.kernels[xx * h.ksize + x]!;
        const p = rowStart + (xmin + x) * 3;
        r += src[p]! * w;
        g += src[p + 1]! * w;
        b += src[p + 2]! * w;
      }
      const o = (y * size + xx) * 3;
      mid[o] = clip8(r);
      mid[o + 1] = clip8(g);
      mid[o + 2] = clip8(b);
    }
  }
  const out = Buffer.alloc(size * size * 3);
  for (let yy = 0; yy < size; yy++) {
    const ymin = v.bounds[yy * 2]! - firstRow;
    const count = v.bounds[yy * 2 + 1]!;
    for (let xx = 0; xx < size; xx++) {
      let r = half;
      let g = half;
      let b = half;
      for (let y = 0; y < count; y++) {
        const w = v.kernels[yy * v.ksize + y]!;
        const p = ((ymin + y) * size + xx) * 3;
        r += mid[p]! * w;
        g += mid[p + 1]! * w;
        b += mid[p + 2]! * w;
      }
      const o = (yy * size + xx) * 3;
      out[o] = clip8(r);
      out[o + 1] = clip8(g);
      out[o + 2] = clip8(b);
    }
  }
  return out;
}
