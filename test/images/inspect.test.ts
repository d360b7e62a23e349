import sharp from 'sharp';
import { describe, expect, test } from 'vitest';
import {
  checkImageHeader,
  countJpegScans,
  FRAME_MAX,
  FRAME_MIN,
  frameLongSide,
  inspectImage,
  MAX_JPEG_SCANS,
  MAX_WHOLE_DECODE_BYTES,
  sniffImageType,
  wholeDecodeBytes,
} from '../../src/core/images/inspect.js';
import { makeBombPng, makeExifRotatedJpeg, makeManyScanJpeg, makeJpeg, makePng, makeWebp, truncate } from '../fixtures/images/make.js';
import { expectAppError } from '../services/helpers.js';

describe('accepted images', () => {
  test.each([
    ['JPEG', makeJpeg, 'image/jpeg'],
    ['PNG', makePng, 'image/png'],
    ['WebP', makeWebp, 'image/webp'],
  ] as const)('%s is read with its size and a JPEG thumbnail', async (_name, make, mime) => {
    const data = await make({ width: 640, height: 480 });
    const image = await inspectImage(data);
    expect(image).toMatchObject({ mime, width: 640, height: 480, bytes: data.length });
    expect(sniffImageType(image.thumbnail)).toBe('image/jpeg');
    expect(await sharp(image.thumbnail).metadata()).toMatchObject({ width: 320, height: 240 });
  });

  test('EXIF orientation is applied to the reported size and the thumbnail', async () => {
    const image = await inspectImage(await makeExifRotatedJpeg({ width: 400, height: 300 }));
    expect([image.width, image.height]).toEqual([300, 400]);
    expect(await sharp(image.thumbnail).metadata()).toMatchObject({ width: 240, height: 320 });
  });

  test('exactly 256 px on the short side is enough', async () => {
    await expect(inspectImage(await makeJpeg({ width: 256, height: 900 }))).resolves.toMatchObject({ width: 256 });
  });
});

describe('the decoded frame (what the networks and the thumbnail are made from)', () => {
  test.each([
    // [mime, width, height, long side]: a JPEG comes down to its coarsest scaled decode that keeps
    // FRAME_MIN px (sharp takes 1/s only for a shrink of at least s + 1), everything else to FRAME_MAX
    ['image/jpeg', 4000, 3000, 444], // 1/8: 500 px decoded, 444 kept
    ['image/jpeg', 3000, 4000, 444], // portrait: the long side decides
    ['image/jpeg', 4032, 3024, 448],
    ['image/jpeg', 6000, 4000, 640], // 1/8 still leaves 750 px
    ['image/jpeg', 3599, 2700, 640], // 1/8 would leave 399 px: 1/4
    ['image/jpeg', 2048, 1536, 409], // 1/4
    ['image/jpeg', 1999, 1500, 640], // 1/2 (666 px kept as 640)
    ['image/jpeg', 1500, 1000, 500], // 1/2
    ['image/jpeg', 1199, 900, 640], // no scaled decode leaves 400 px: the whole photo, resized
    ['image/jpeg', 500, 400, 500], // never enlarged
    ['image/png', 4000, 3000, FRAME_MAX],
    ['image/webp', 4000, 3000, FRAME_MAX],
    ['image/png', 300, 256, 300],
    [null, 4000, 3000, FRAME_MAX],
  ] as const)('%s %i×%i: %i px on the long side', (mime, width, height, side) => {
    const got = frameLongSide(mime, width, height);
    expect(got).toBe(side);
    expect(got).toBeLessThanOrEqual(FRAME_MAX);
    if (Math.max(width, height) >= FRAME_MIN) expect(got).toBeGreaterThanOrEqual(FRAME_MIN);
  });

  test('a 12-megapixel JPEG, upright or EXIF-rotated, decodes to its 444 px frame; a PNG to 640 px', async () => {
    const big = { width: 4000, height: 3000 };
    const jpeg = await inspectImage(await makeJpeg(big));
    expect([jpeg.frame.width, jpeg.frame.height, jpeg.frame.uprightWidth, jpeg.frame.uprightHeight]).toEqual([444, 333, 4000, 3000]);
    const rotated = await inspectImage(await makeExifRotatedJpeg(big));
    expect([rotated.frame.width, rotated.frame.height, rotated.width, rotated.height]).toEqual([333, 444, 3000, 4000]);
    const png = await inspectImage(await makePng({ width: 2000, height: 1500 }));
    expect([png.frame.width, png.frame.height]).toEqual([640, 480]);
    for (const image of [jpeg, rotated, png]) {
      expect(image.frame.data.length).toBe(image.frame.width * image.frame.height * 3);
      expect(await sharp(image.thumbnail).metadata()).toMatchObject({ width: image.width > image.height ? 320 : 240 });
    }
  });

  test('a 12-megapixel JPEG really takes libjpeg’s 1/8 decode (the speed the frame size is chosen for)', async () => {
    // Stripes 4 px wide: every 8 x 8 block has the same mean (128) and all its detail in AC
    // coefficients, which the 1/8 decode (DC only) drops: a flat frame. Any finer decode keeps
    // a ripple. A sharp that stopped taking 1/8 for this frame size would fail here, not just
    // get slower.
    const stripes = async (width: number, height: number) => {
      const raw = Buffer.alloc(width * height * 3);
      for (let x = 0; x < width; x++) {
        const v = x % 8 < 4 ? 64 : 192;
        for (let y = 0; y < height; y++) raw.fill(v, (y * width + x) * 3, (y * width + x) * 3 + 3);
      }
      return sharp(raw, { raw: { width, height, channels: 3 } })
        .jpeg({ quality: 100, chromaSubsampling: '4:4:4' })
        .toBuffer();
    };
    const spread = async (width: number, height: number) => {
      const { frame } = await inspectImage(await stripes(width, height));
      let min = 255;
      let max = 0;
      for (const v of frame.data) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      return { size: [frame.width, frame.height], spread: max - min };
    };
    expect(await spread(4000, 3000)).toEqual({ size: [444, 333], spread: 0 });
    const quarter = await spread(3599, 2700); // 1/8 would leave 399 px: 1/4, and the ripple shows
    expect(quarter.size).toEqual([640, 481]);
    expect(quarter.spread).toBeGreaterThan(20);
  });

  test('transparency reads as black whether or not the frame is scaled (preprocess.py rgb() does the same)', async () => {
    // grey 200 everywhere, alpha 0 on the left half and 128 on the right half
    const cutOut = async (format: 'png' | 'webp', width: number, height: number) => {
      const raw = Buffer.alloc(width * height * 4, 200);
      for (let i = 0; i < width * height; i++) raw[i * 4 + 3] = i % width < width / 2 ? 0 : 128;
      return sharp(raw, { raw: { width, height, channels: 4 } })
        [format]({ lossless: true })
        .toBuffer();
    };
    for (const [format, width, height] of [
      ['png', 400, 300],
      ['png', 1000, 750],
      ['webp', 400, 300],
      ['webp', 1000, 750],
    ] as const) {
      const { frame } = await inspectImage(await cutOut(format, width, height));
      const at = (x: number) => frame.data[(Math.floor(frame.height / 2) * frame.width + x) * 3]!;
      expect([at(2), at(frame.width - 3)], `${format} ${width}×${height}`).toEqual([0, expect.closeTo(100, -0.5)]); // 200 × 128 / 255, give or take a level
    }
  });
});

/** A plain grey 300 px square in a format the app refuses. */
const grey300 = (format: 'gif' | 'tiff') =>
  sharp({ create: { width: 300, height: 300, channels: 3, background: '#888' } })
    .toFormat(format)
    .toBuffer();

describe('hostile and unusable uploads', () => {
  test('zero bytes is a validation error', async () => {
    await expectAppError(inspectImage(Buffer.alloc(0)), 'VALIDATION_ERROR');
  });

  test('over 10 MiB is refused before anything is decoded', async () => {
    const big = Buffer.concat([await makeJpeg(), Buffer.alloc(10 * 1024 * 1024)]);
    await expectAppError(inspectImage(big), 'FILE_TOO_LARGE');
  });

  test('type is decided by content: GIF, TIFF, text and HTML are refused whatever they are called', async () => {
    const gif = await grey300('gif');
    const tiff = await grey300('tiff');
    for (const data of [gif, tiff, Buffer.from('definitely a photo.jpg'), Buffer.from('<html><script>')]) {
      await expectAppError(inspectImage(data), 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  test('a refused file a clerk might send is named, with what to do: HEIC from an iPhone above all', async () => {
    const box = (brand: string) => Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from(`ftyp${brand}`), Buffer.alloc(16)]);
    const gif = await grey300('gif');
    const tiff = await grey300('tiff');
    const cases: Array<[Buffer, RegExp]> = [
      [box('heic'), /HEIC photo .*export it as JPEG, or set the camera to "Most Compatible"/],
      [box('mif1'), /HEIC/],
      [box('avif'), /AVIF image/],
      [gif, /GIF image/],
      [tiff, /TIFF image/],
      [Buffer.from('BM' + 'x'.repeat(100)), /BMP image/],
      [Buffer.from('%PDF-1.7\n'), /PDF document/],
      [Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'), /SVG drawing/],
    ];
    for (const [data, words] of cases) {
      const error = await expectAppError(inspectImage(data), 'UNSUPPORTED_MEDIA_TYPE');
      expect(error.message).toMatch(/^The image must be a JPEG, PNG or WebP file\. This file is /);
      expect(error.message).toMatch(words);
    }
    expect((await expectAppError(inspectImage(Buffer.from('just text')), 'UNSUPPORTED_MEDIA_TYPE')).message).toBe(
      'The image must be a JPEG, PNG or WebP file.',
    );
  });

  test('truncated JPEG, PNG and WebP are unreadable', async () => {
    const jpeg = await makeJpeg();
    for (const data of [truncate(jpeg, 0.6), jpeg.subarray(0, jpeg.length - 2), truncate(await makePng(), 0.6), truncate(await makeWebp(), 0.6)]) {
      await expectAppError(inspectImage(data), 'IMAGE_UNREADABLE');
    }
  });

  test('a JPEG cut short with an end marker added is unreadable, not read with its lower part grey', async () => {
    const jpeg = await makeJpeg({ width: 640, height: 480 });
    const cut = Buffer.concat([jpeg.subarray(0, Math.floor(jpeg.length / 2)), Buffer.from([0xff, 0xd9])]);
    const error = await expectAppError(inspectImage(cut), 'IMAGE_UNREADABLE');
    expect(error.message).toMatch(/truncated or corrupt/);
    // bytes after the end marker are no damage to the photo
    expect((await inspectImage(Buffer.concat([jpeg, Buffer.alloc(4096, 0x5a)]))).width).toBe(640);
  });

  test('a JPEG of more than 100 scans is refused from its markers, before any decode; ordinary progressive JPEGs pass', async () => {
    expect(countJpegScans(makeManyScanJpeg(320, 320, 12), MAX_JPEG_SCANS)).toBe(13);
    expect(countJpegScans(makeManyScanJpeg(320, 320, 150), MAX_JPEG_SCANS)).toBe(MAX_JPEG_SCANS + 1);
    // a 36-megapixel one of 10 000 scans is 0.8 MB and took 35 s to decode: refused at once
    const crafted = makeManyScanJpeg(6000, 6000, 10_000);
    expect(crafted.length).toBeLessThan(1_000_000);
    // refused by checkImageHeader, which decodes nothing (the message is only made there)
    const error = await expectAppError(checkImageHeader(crafted), 'IMAGE_UNREADABLE');
    expect(error.message).toMatch(/more than 100 progressive passes \(JPEG scan segments/);
    await expectAppError(inspectImage(crafted), 'IMAGE_UNREADABLE');
    // junk bytes where a marker belongs (libjpeg skips them and reads on) hide nothing
    const sos = crafted.indexOf(Buffer.from([0xff, 0xda]));
    const junked = Buffer.concat([crafted.subarray(0, sos), Buffer.from([0x00, 0x13, 0x37]), crafted.subarray(sos)]);
    expect(countJpegScans(junked, MAX_JPEG_SCANS)).toBe(MAX_JPEG_SCANS + 1);
    await expectAppError(checkImageHeader(junked), 'IMAGE_UNREADABLE');
    // nor does FF 00 (junk to libjpeg, not a marker) followed by a comment holding an end marker
    const disguise = Buffer.from([0xff, 0x00, 0x00, 0x06, 0xff, 0xfe, 0x00, 0x06, 0xff, 0xd9, 0x00, 0x00]);
    const disguised = Buffer.concat([crafted.subarray(0, sos), disguise, crafted.subarray(sos)]);
    expect(countJpegScans(disguised, MAX_JPEG_SCANS)).toBe(MAX_JPEG_SCANS + 1);
    const progressive = await sharp(await makeJpeg({ width: 640, height: 480 }))
      .jpeg({ progressive: true })
      .toBuffer();
    expect(countJpegScans(progressive, MAX_JPEG_SCANS)).toBeGreaterThan(1);
    expect(countJpegScans(progressive, MAX_JPEG_SCANS)).toBeLessThanOrEqual(20);
    expect((await inspectImage(progressive)).width).toBe(640);
    expect(countJpegScans(await makeJpeg(), MAX_JPEG_SCANS)).toBe(1);
  });

  test('a progressive JPEG or interlaced PNG that would need more than 160 MB to decode is refused from its header', async () => {
    expect(wholeDecodeBytes('image/png', { width: 6300, height: 6300, isProgressive: true, channels: 4, depth: 'ushort' })).toBe(6300 * 6300 * 8);
    expect(wholeDecodeBytes('image/png', { width: 6300, height: 6300, isProgressive: false, channels: 4, depth: 'ushort' })).toBe(0);
    expect(wholeDecodeBytes('image/jpeg', { width: 4000, height: 3000, isProgressive: true, channels: 3, depth: 'uchar', chromaSubsampling: '4:2:0' })).toBe(
      12e6 * 3,
    );
    expect(
      wholeDecodeBytes('image/jpeg', { width: 6300, height: 6300, isProgressive: true, channels: 3, depth: 'uchar', chromaSubsampling: '4:4:4' }),
    ).toBeGreaterThan(MAX_WHOLE_DECODE_BYTES);
    // a real one: 16-bit RGBA, interlaced, 5000 × 5000 (200 MB whole), from a few hundred KB
    const interlaced = await sharp({ create: { width: 5000, height: 5000, channels: 4, background: { r: 90, g: 90, b: 90, alpha: 1 } } })
      .png({ progressive: true, compressionLevel: 1 })
      .toColourspace('rgb16')
      .toBuffer();
    const error = await expectAppError(inspectImage(interlaced), 'IMAGE_TOO_LARGE');
    expect(error.message).toMatch(/interlaced PNG, which needs \d+ MB to decode; at most 160 MB/);
  });

  test('right magic bytes with garbage behind them are unreadable', async () => {
    const garbage = Buffer.alloc(4096, 0x5a);
    await expectAppError(inspectImage(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), garbage])), 'IMAGE_UNREADABLE');
    const pngMagic = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await expectAppError(inspectImage(Buffer.concat([pngMagic, garbage])), 'IMAGE_UNREADABLE');
    const webpHead = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBP'), garbage]);
    await expectAppError(inspectImage(webpHead), 'IMAGE_UNREADABLE');
  });

  test('a PNG header glued onto a JPEG body is unreadable', async () => {
    const jpeg = await makeJpeg();
    const pngMagic = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await expectAppError(inspectImage(Buffer.concat([pngMagic, jpeg])), 'IMAGE_UNREADABLE');
  });

  test('a decompression bomb (400 megapixels in ~50 KB) is refused from its header', async () => {
    const bomb = makeBombPng(20_000);
    expect(bomb.length).toBeLessThan(100_000);
    const error = await expectAppError(inspectImage(bomb), 'IMAGE_TOO_LARGE');
    expect(error.message).toContain('20000×20000');
  });

  test('just over 40 megapixels is too large', async () => {
    await expectAppError(inspectImage(makeBombPng(6_325)), 'IMAGE_TOO_LARGE');
  });

  test('under 256 px on the short side is too small, after EXIF orientation', async () => {
    await expectAppError(inspectImage(await makeJpeg({ width: 800, height: 255 })), 'IMAGE_TOO_SMALL');
    await expectAppError(inspectImage(await makeExifRotatedJpeg({ width: 900, height: 200 })), 'IMAGE_TOO_SMALL');
    await expectAppError(inspectImage(await makePng({ width: 16, height: 16 })), 'IMAGE_TOO_SMALL');
  });
});
