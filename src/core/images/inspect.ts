/**
 * Upload checks before any model runs (docs/API.md §2, §3): the type comes from the
 * bytes, the pixel count from the header (so a decompression bomb is never
 * decoded), and the decodability from a real decode, which also yields the
 * thumbnail kept with the scan.
 */
import sharp, { type Metadata } from 'sharp';
import { MAX_IMAGE_BYTES } from '../../shared/contract/limits.js';
import { AppError } from '../errors.js';
import type { DecodedFrame } from '../analysis/analyzer.js';
import type { StoredImageInfo } from '../types.js';

export type ImageMime = StoredImageInfo['mime'];

export const MAX_PIXELS = 40_000_000;
export const MIN_SHORT_SIDE = 256;
/**
 * Scans a JPEG may have. Ordinary progressive encoders write about 10 (libjpeg 10, mozjpeg up to
 * about 15); each scan makes the decoder pass over the whole image again, so a small crafted file of
 * thousands of empty scans held an analysis slot for minutes (a security audit, 2026-11-25).
 */
export const MAX_JPEG_SCANS = 100;
/**
 * What a progressive JPEG's coefficients or an interlaced PNG's pixels may take in memory: those
 * are decoded whole before they can be shrunk, unlike baseline JPEGs and plain PNGs, so a 300 KB
 * 16-bit interlaced PNG of 40 megapixels made a decode of 540 MB.
 */
export const MAX_WHOLE_DECODE_BYTES = 160 * 1024 * 1024;
export const THUMBNAIL_SIZE = 320;
/** The one decode of an upload: enough for the thumbnail and the 160 px model input. */
export const FRAME_MAX = 640;
/**
 * The long side a large JPEG's frame may come down to: the networks were trained on photos of
 * 300-400 px (models/training/make_dataset.py PHOTO_SIZES), the tread crop included, so a frame
 * of 400 px still holds every pixel they learnt from.
 */
export const FRAME_MIN = 400;
/** libjpeg's scaled decodes, coarsest first (sharp asks for one through jpegload's `shrink`). */
const JPEG_SCALES = [8, 4, 2] as const;

const EXTENSIONS: Record<ImageMime, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };
const SHARP_FORMAT: Record<ImageMime, string> = { 'image/jpeg': 'jpeg', 'image/png': 'png', 'image/webp': 'webp' };

export function extensionFor(mime: ImageMime): string {
  return EXTENSIONS[mime];
}

/** JPEG, PNG or WebP by magic bytes; null for anything else, whatever its name or declared type. */
export function sniffImageType(data: Buffer): ImageMime | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return 'image/png';
  }
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') {
    return 'image/webp';
  }
  return null;
}

/**
 * What a refused file is, when it is something a counter clerk might send: the words name it and
 * say what to do (an iPhone saves HEIC unless set to "Most Compatible"). Null for anything else.
 */
export function describeOtherType(data: Buffer): string | null {
  if (data.length >= 12 && data.toString('latin1', 4, 8) === 'ftyp') {
    const brand = data.toString('latin1', 8, 12);
    if (/^(heic|heix|hevc|hevx|heim|heis|mif1|msf1)$/.test(brand)) {
      return 'a HEIC photo (an iPhone\'s usual format): export it as JPEG, or set the camera to "Most Compatible"';
    }
    if (/^avi[fs]$/.test(brand)) return 'an AVIF image: save it as JPEG';
  }
  const head = data.toString('latin1', 0, Math.min(data.length, 512)).trimStart();
  if (head.startsWith('GIF8')) return 'a GIF image: save it as JPEG or PNG';
  if (head.startsWith('II*\u0000') || head.startsWith('MM\u0000*')) return 'a TIFF image: save it as JPEG';
  if (head.startsWith('BM')) return 'a BMP image: save it as JPEG or PNG';
  if (head.startsWith('%PDF')) return 'a PDF document, not a photo';
  if (/^(<\?xml[^>]*>\s*)?<svg[\s>]/i.test(head)) return 'an SVG drawing, not a photo';
  return null;
}

export interface InspectedImage {
  mime: ImageMime;
  /** Upright size (EXIF orientation applied). */
  width: number;
  height: number;
  bytes: number;
  /** JPEG, at most THUMBNAIL_SIZE px on the long side, upright. */
  thumbnail: Buffer;
  frame: DecodedFrame;
}

function unreadable(cause?: unknown): AppError {
  return new AppError('IMAGE_UNREADABLE', 'The image could not be decoded; it may be truncated or corrupt.', { cause });
}

export type ImageHeader = Omit<InspectedImage, 'thumbnail' | 'frame'>;

/**
 * Everything that can be decided from the bytes and the header alone. Errors: VALIDATION_ERROR
 * (zero bytes: nothing was uploaded, so it is a request problem rather than a media type),
 * FILE_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, IMAGE_TOO_LARGE, IMAGE_TOO_SMALL, IMAGE_UNREADABLE.
 */
export async function checkImageHeader(data: Buffer): Promise<ImageHeader> {
  if (data.length === 0) throw new AppError('VALIDATION_ERROR', 'The image file is empty.');
  // The HTTP layer enforces the limit while streaming; this guards every other caller.
  if (data.length > MAX_IMAGE_BYTES) throw new AppError('FILE_TOO_LARGE', 'The image is larger than 10 MiB.');
  const mime = sniffImageType(data);
  if (!mime) {
    const other = describeOtherType(data);
    const hint = other === null ? '' : ` This file is ${other}.`;
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The image must be a JPEG, PNG or WebP file.${hint}`);
  }

  let meta: Metadata;
  try {
    // Header only: the pixel limit is ours to apply below, so sharp's own must not pre-empt it.
    meta = await sharp(data, { failOn: 'error', limitInputPixels: false }).metadata();
  } catch (error) {
    throw unreadable(error);
  }
  if (meta.format !== SHARP_FORMAT[mime] || !meta.width || !meta.height) throw unreadable();
  if (meta.width * meta.height > MAX_PIXELS) {
    throw new AppError('IMAGE_TOO_LARGE', `The image is ${meta.width}×${meta.height} pixels; at most ${MAX_PIXELS / 1_000_000} megapixels are accepted.`);
  }
  const wholeDecode = wholeDecodeBytes(mime, meta);
  if (wholeDecode > MAX_WHOLE_DECODE_BYTES) {
    const kind = mime === 'image/png' ? 'an interlaced PNG' : 'a progressive JPEG';
    throw new AppError(
      'IMAGE_TOO_LARGE',
      `The image is ${meta.width}×${meta.height} pixels stored as ${kind}, which needs ${Math.ceil(wholeDecode / 1048576)} MB to decode; ` +
        `at most ${MAX_WHOLE_DECODE_BYTES / 1048576} MB. Send the camera's original photo, or save it as an ordinary JPEG.`,
    );
  }
  if (mime === 'image/jpeg') {
    const scans = countJpegScans(data, MAX_JPEG_SCANS);
    if (scans > MAX_JPEG_SCANS) {
      throw new AppError(
        'IMAGE_UNREADABLE',
        `The JPEG is encoded in more than ${MAX_JPEG_SCANS} progressive passes (JPEG scan segments; a camera's photo has at most about 10): it cannot be analysed. Send the camera's original photo.`,
      );
    }
  }
  const swapped = (meta.orientation ?? 1) >= 5;
  const width = swapped ? meta.height : meta.width;
  const height = swapped ? meta.width : meta.height;
  if (Math.min(width, height) < MIN_SHORT_SIDE) {
    throw new AppError('IMAGE_TOO_SMALL', `The image is ${width}×${height} pixels; the short side must be at least ${MIN_SHORT_SIDE} pixels.`);
  }
  return { mime, width, height, bytes: data.length };
}

/**
 * Memory a decode takes before any shrinking, for the files libvips must decode whole: a progressive
 * JPEG's coefficients (2 bytes each, per component and its sampling) and an interlaced PNG's
 * pixels. 0 for the others, which are decoded line by line.
 */
export function wholeDecodeBytes(
  mime: ImageMime,
  meta: Partial<Pick<Metadata, 'width' | 'height' | 'isProgressive' | 'channels' | 'depth' | 'chromaSubsampling'>>,
): number {
  if (!meta.isProgressive || !meta.width || !meta.height) return 0;
  const pixels = meta.width * meta.height;
  if (mime === 'image/png') return pixels * (meta.channels ?? 4) * (meta.depth === 'ushort' ? 2 : 1);
  if (mime !== 'image/jpeg') return 0;
  // samples per pixel over all components: 4:4:4 three, 4:2:2 two, 4:2:0 one and a half, grey one, CMYK four
  const perPixel: Record<string, number> = { '4:4:4': 3, '4:2:2': 2, '4:4:0': 2, '4:2:0': 1.5, '4:1:1': 1.5, '4:4:4:4': 4, '4:2:0:4': 3 };
  const samples = (meta.channels ?? 3) === 1 ? 1 : (perPixel[meta.chromaSubsampling ?? ''] ?? meta.channels ?? 3);
  return pixels * samples * 2;
}

/**
 * How many scans (SOS segments) a JPEG has, counted from its markers without decoding, up to one more
 * than `stopAfter`. Junk between segments is skipped as libjpeg skips it.
 */
export function countJpegScans(data: Buffer, stopAfter: number): number {
  let scans = 0;
  let pos = 2; // after SOI
  while (pos + 1 < data.length) {
    if (data[pos] !== 0xff) {
      // bytes where a marker belongs: libjpeg skips them ("extraneous bytes") and reads on, so the
      // count does too (stopping here let one junk byte hide ten thousand scans)
      const ff = data.indexOf(0xff, pos);
      if (ff < 0) return scans;
      pos = ff;
      continue;
    }
    const marker = data[pos + 1]!;
    if (marker === 0xff) {
      pos += 1; // fill byte
      continue;
    }
    if (marker === 0x00) {
      pos += 2; // FF 00 between segments is junk to libjpeg, not a marker with a length
      continue;
    }
    if (marker === 0xd9) return scans; // EOI
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      pos += 2; // markers without a length
      continue;
    }
    if (pos + 4 > data.length) return scans;
    pos += 2 + data.readUInt16BE(pos + 2);
    if (marker !== 0xda) continue;
    scans += 1;
    if (scans > stopAfter) return scans;
    // the entropy-coded data runs to the next marker: 0xFF followed by neither 0x00 (a stuffed
    // 0xFF) nor a restart marker
    for (;;) {
      const ff = data.indexOf(0xff, pos);
      if (ff < 0 || ff + 1 >= data.length) return scans;
      const next = data[ff + 1]!;
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
        pos = ff + 2;
        continue;
      }
      if (next === 0xff) {
        pos = ff + 1;
        continue;
      }
      pos = ff;
      break;
    }
  }
  return scans;
}

/**
 * The long side of an upload's frame. At most FRAME_MAX; for a JPEG, the coarsest scaled decode
 * (1/8, 1/4, 1/2 of the stored size: libjpeg then skips most of the inverse DCT) that still leaves
 * FRAME_MIN px. sharp takes the 1/s decode only when the photo is shrunk by at least s + 1 (it
 * halves an exact factor of s for libjpeg's rounding: pipeline.cc), hence the s + 1. A
 * 4000 x 3000 phone photo decodes at 1/8 to a 444 px frame instead of at 1/4 to a 640 px one, a
 * fifth less decode time (33 against 42 ms, docs/PERFORMANCE.md); PNG and WebP keep FRAME_MAX.
 */
export function frameLongSide(mime: ImageMime | null, width: number, height: number): number {
  const long = Math.max(width, height);
  if (mime === 'image/jpeg') {
    for (const s of JPEG_SCALES) {
      const side = Math.floor(long / (s + 1));
      if (side >= FRAME_MIN) return Math.min(FRAME_MAX, side);
    }
  }
  return Math.min(FRAME_MAX, long);
}

/**
 * The one full decode of an upload (shrink-on-load still reads every byte, so a truncated or
 * corrupt upload fails here: IMAGE_UNREADABLE). Call it only after checkImageHeader, which keeps
 * decompression bombs away.
 */
export async function decodeFrame(data: Buffer, header: Pick<ImageHeader, 'width' | 'height'>): Promise<DecodedFrame> {
  const side = frameLongSide(sniffImageType(data), header.width, header.height);
  try {
    return await decodeFrameWith(data, header, side, 'warning');
  } catch (error) {
    // libjpeg reports data that ends early only as a warning: a photo cut short with an end marker
    // added decoded with its lower part grey and got a confident reading. Other warnings (an odd
    // ICC profile, extraneous bytes some cameras write) are tolerated as before.
    if (/premature end/i.test((error as Error).message)) throw unreadable(error);
  }
  try {
    return await decodeFrameWith(data, header, side, 'error');
  } catch (error) {
    throw unreadable(error);
  }
}

async function decodeFrameWith(data: Buffer, header: Pick<ImageHeader, 'width' | 'height'>, side: number, failOn: 'warning' | 'error'): Promise<DecodedFrame> {
  const { data: pixels, info } = await sharp(data, { failOn, limitInputPixels: MAX_PIXELS })
    .autoOrient()
    .resize(side, side, { fit: 'inside', withoutEnlargement: true, kernel: 'linear', fastShrinkOnLoad: true })
    // transparency over black whether or not the frame is scaled (sharp's resize weighs colours by
    // their alpha, so a scaled frame's transparent pixels come out black anyway); preprocess.py's
    // rgb() does the same. Photos have no alpha: this only makes cut-outs read one way.
    .flatten({ background: '#000000' })
    .toColourspace('srgb')
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`decoded ${info.channels} channels`);
  return { data: pixels, width: info.width, height: info.height, uprightWidth: header.width, uprightHeight: header.height };
}

/** The upright JPEG thumbnail kept with a scan, from the decoded frame. */
export function makeThumbnail(frame: DecodedFrame): Promise<Buffer> {
  return sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/** Validate an upload completely: the header checks, then the decode that yields frame and thumbnail. */
export async function inspectImage(data: Buffer): Promise<InspectedImage> {
  const header = await checkImageHeader(data);
  const frame = await decodeFrame(data, header);
  return { ...header, frame, thumbnail: await makeThumbnail(frame) };
}
