/**
 * Hostile uploads for fuzzing POST /analyze: valid JPEG/PNG/WebP seeds mutated (bit flips,
 * truncation, splices, chunk drops and repeats, forged sizes), random bytes with and without
 * magic numbers, broken multipart framing, and form parts that are not form-data (none, another
 * or a folded Content-Disposition) of sizes around 16 KiB and 64 KiB, the ones busboy never
 * finished on (issue 41). Deterministic for a seed, so a failure found by scripts/fuzz.ts can be
 * replayed by its case number.
 */
import { makeExifRotatedJpeg, makeJpeg, makePng, makeWebp } from '../fixtures/images/make.js';

export interface FuzzCase {
  /** What was done, for the failure message. */
  label: string;
  /** The image bytes; ignored when `body` is set. */
  image: Buffer;
  /** A whole multipart body to send instead of a well-formed form around `image`. */
  body?: Buffer;
}

/** xorshift32: fast, seedable, good enough to pick offsets. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 0x9e3779b9;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

export async function seedImages(): Promise<Buffer[]> {
  return [
    await makeJpeg({ width: 320, height: 256, shade: 90 }),
    await makePng({ width: 300, height: 260, shade: 150 }),
    await makeWebp({ width: 300, height: 280, shade: 120 }),
    await makeExifRotatedJpeg({ width: 320, height: 260, shade: 70 }),
  ];
}

const MAGIC = [
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x40, 0, 0, 0]), Buffer.from('WEBPVP8 ')]),
];

export const BOUNDARY = '----tirewear-fuzz';

export function multipart(image: Buffer, filename = 'tire.jpg'): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="${filename}"\r\nContent-Type: image/jpeg\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

type Mutation = (data: Buffer, other: Buffer, random: () => number) => { label: string; image: Buffer; body?: Buffer };

const int = (random: () => number, n: number) => Math.floor(random() * n);

const MUTATIONS: Mutation[] = [
  (data, _o, r) => {
    const out = Buffer.from(data);
    const flips = 1 + int(r, 24);
    for (let i = 0; i < flips; i++) {
      const at = int(r, out.length);
      out[at] = out[at]! ^ (1 << int(r, 8));
    }
    return { label: `${flips} bit flips`, image: out };
  },
  (data, _o, r) => {
    const out = Buffer.from(data);
    const at = int(r, out.length);
    const len = 1 + int(r, 256);
    for (let i = at; i < Math.min(out.length, at + len); i++) out[i] = int(r, 256);
    return { label: `${len} random bytes at ${at}`, image: out };
  },
  (data, _o, r) => {
    const keep = 1 + int(r, data.length - 1);
    return { label: `truncated to ${keep} bytes`, image: Buffer.from(data.subarray(0, keep)) };
  },
  (data, other, r) => {
    const a = int(r, data.length);
    const b = int(r, other.length);
    return { label: `head ${a} spliced onto tail from ${b}`, image: Buffer.concat([data.subarray(0, a), other.subarray(b)]) };
  },
  (data, _o, r) => {
    const at = int(r, data.length);
    const len = 1 + int(r, Math.min(4096, data.length - at));
    return { label: `${len} bytes dropped at ${at}`, image: Buffer.concat([data.subarray(0, at), data.subarray(at + len)]) };
  },
  (data, _o, r) => {
    const at = int(r, data.length);
    const len = 1 + int(r, Math.min(4096, data.length - at));
    const piece = data.subarray(at, at + len);
    return { label: `${len} bytes repeated at ${at}`, image: Buffer.concat([data.subarray(0, at + len), piece, piece, data.subarray(at + len)]) };
  },
  (data, _o, r) => {
    // Forge a size field: every 2- or 4-byte big-endian value near the start is a candidate header field.
    const out = Buffer.from(data);
    const at = int(r, Math.min(64, out.length - 4));
    const value = [0, 1, 0xffff, 0x7fff, 65500, 0xffffffff][int(r, 6)]!;
    if (r() < 0.5) out.writeUInt16BE(value & 0xffff, at);
    else out.writeUInt32BE(value >>> 0, at);
    return { label: `size-like field ${value} at ${at}`, image: out };
  },
  (_d, _o, r) => {
    const len = int(r, 20_000);
    const noise = Buffer.from(Array.from({ length: len }, () => int(r, 256)));
    return { label: `${len} random bytes`, image: len === 0 ? Buffer.from([0]) : noise };
  },
  (_d, _o, r) => {
    const magic = MAGIC[int(r, MAGIC.length)]!;
    const len = int(r, 5000);
    return { label: `magic + ${len} random bytes`, image: Buffer.concat([magic, Buffer.from(Array.from({ length: len }, () => int(r, 256)))]) };
  },
  (data, _o, r) => {
    // Broken framing: the body itself is cut, or its boundary damaged.
    const body = multipart(data);
    const cut = r() < 0.5;
    const at = int(r, body.length);
    const broken = cut ? body.subarray(0, at) : Buffer.from(body.toString('latin1').replaceAll(BOUNDARY, BOUNDARY.slice(0, 6 + int(r, 8))), 'latin1');
    return { label: cut ? `multipart body cut at ${at}` : 'multipart boundary damaged', image: data, body: Buffer.from(broken) };
  },
  (data, _o, r) => oddPart(data, r),
];

/** Part headers busboy skips without a word (it hung on one of 16 KiB or more), and two it reads. */
const ODD_PART_HEADERS: Array<[string, string]> = [
  ['no Content-Disposition', 'Content-Type: image/jpeg\r\n'],
  ['no headers at all', ''],
  ['Content-Disposition: attachment', 'Content-Disposition: attachment; filename="tire.jpg"\r\nContent-Type: image/jpeg\r\n'],
  ['Content-Disposition: inline', 'Content-Disposition: inline; name="image"\r\n'],
  ['a folded first line', ' Content-Disposition: form-data; name="image"; filename="tire.jpg"\r\n'],
  ['form-data folded onto a second line', 'Content-Disposition:\r\n form-data\r\nContent-Type: image/jpeg\r\n'],
  ['a folded line after junk', 'X-Junk: 1\r\n\tContent-Disposition: form-data; name="image"\r\n'],
  ['a bare LF in a header line', 'Content-Type: image/\njpeg\r\nContent-Disposition: form-data; name="image"\r\n'],
  ['a name with an encoded line break', `Content-Disposition: form-data; name*=utf-8''im%0Dage\r\n`],
  ['a folded parameter (read by busboy)', 'Content-Disposition: form-data;\r\n\tname="image"; filename="tire.jpg"\r\n'],
  ['a folded disposition (read by busboy)', 'Content-Disposition:\r\n form-data; name="image"; filename="tire.jpg"\r\n'],
];

/** Part sizes on both sides of busboy's 16 KiB high-water mark and of 64 KiB socket reads. */
const ODD_PART_SIZES = [16_383, 16_384, 16_385, 20_000, 65_535, 65_536, 65_537];

function oddPart(data: Buffer, random: () => number): { label: string; image: Buffer; body: Buffer } {
  const [what, headers] = ODD_PART_HEADERS[int(random, ODD_PART_HEADERS.length)]!;
  const size = random() < 0.8 ? ODD_PART_SIZES[int(random, ODD_PART_SIZES.length)]! : 1 + int(random, 80_000);
  const content = Buffer.alloc(size);
  data.copy(content, 0, 0, Math.min(size, data.length));
  const before = random() < 0.3 ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="vehicle"\r\n\r\nVW Golf\r\n` : '';
  const body = Buffer.concat([
    Buffer.from(`${before}--${BOUNDARY}\r\n${headers}\r\n`, 'latin1'),
    content,
    Buffer.from(random() < 0.9 ? `\r\n--${BOUNDARY}--\r\n` : `\r\n--${BOUNDARY}\r\n`),
  ]);
  return { label: `a part with ${what}, ${size} bytes`, image: data, body };
}

/** `count` cases from `seeds`, the same ones for the same `seed`. */
export function* fuzzCases(seeds: readonly Buffer[], count: number, seed = 1): Generator<FuzzCase, void> {
  const random = rng(seed);
  for (let i = 0; i < count; i++) {
    const data = seeds[i % seeds.length]!;
    const other = seeds[int(random, seeds.length)]!;
    const mutation = MUTATIONS[int(random, MUTATIONS.length)]!;
    const made = mutation(data, other, random);
    yield { ...made, label: `#${i} ${made.label}` };
  }
}
