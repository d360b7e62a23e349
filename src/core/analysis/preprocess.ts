/**
 * Image → model tensor, the Node twin of models/training/preprocess.py: the
 * EXIF-upright frame stretched to size x size with a linear (triangle) filter,
 * RGB scaled to 0..1 and normalised per channel, NCHW. JPEG and WebP decode
 * with shrink-on-load, so a 12-megapixel photo is never decoded in full.
 */
import sharp from 'sharp';
import { AppError } from '../errors.js';
import type { DecodedFrame } from './analyzer.js';

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

/** RGB bytes (size x size x 3) exactly as the training pipeline saw them. */
export async function resizedPixels(image: Buffer, size: number): Promise<Buffer> {
  try {
    return await sharp(image, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS })
      .autoOrient()
      .resize(size, size, { fit: 'fill', kernel: 'linear', fastShrinkOnLoad: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer();
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

export async function prepareInput(image: Buffer, spec: InputSpec): Promise<ModelInput> {
  const [size, pixels] = await Promise.all([uprightSize(image), resizedPixels(image, spec.size)]);
  return { tensor: normalise(pixels, spec), pixels, ...size };
}

/**
 * The same tensor from a frame the scan service already decoded (shrink-on-load to at most
 * 640 px, then this linear resize): within the parity tolerance of prepareInput, one decode less.
 */
export async function prepareFrameInput(frame: DecodedFrame, spec: InputSpec): Promise<ModelInput> {
  const pixels = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(spec.size, spec.size, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return { tensor: normalise(pixels, spec), pixels, width: frame.uprightWidth, height: frame.uprightHeight };
}
