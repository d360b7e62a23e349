/**
 * The benchmark's photos, made on the fly: a tire tread (the engine's parity fixture when it
 * exists, else a drawn tread) scaled to phone-photo sizes with sensor-like noise,
 * so the JPEG compresses like a real 12-megapixel photo rather than a flat test card.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';

export interface BenchImage {
  name: string;
  mime: string;
  width: number;
  height: number;
  data: Buffer;
}

/** The engine's parity fixture: a rendered tread photo the models recognise as a tire. */
const FIXTURE = path.resolve(import.meta.dirname, '..', 'test', 'fixtures', 'tires', 'parity', 'tread.jpg');

/** Dark rubber, four main grooves, lateral slots and sipes: enough structure for the codecs. */
function drawnTread(width: number, height: number): Buffer {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x / width;
      const mainGroove = [0.2, 0.4, 0.6, 0.8].some((g) => Math.abs(u - g) < 0.025);
      const lateral = (y + Math.floor(u * 40)) % 90 < 8;
      const sipe = (x + 2 * y) % 37 === 0;
      const base = 58 + 18 * Math.sin(x / 31) * Math.cos(y / 47);
      const v = mainGroove ? 18 : lateral ? 30 : sipe ? 36 : base;
      const i = (y * width + x) * 3;
      raw[i] = v;
      raw[i + 1] = v;
      raw[i + 2] = v + 4;
    }
  }
  return raw;
}

async function sourcePhoto(): Promise<Sharp> {
  if (existsSync(FIXTURE)) return sharp(FIXTURE).rotate();
  const width = 1000;
  const height = 750;
  return sharp(drawnTread(width, height), { raw: { width, height, channels: 3 } });
}

/** Upscaled tread plus per-pixel noise (deterministic), as raw RGB at the target size. */
async function photoPixels(width: number, height: number): Promise<Buffer> {
  const raw = await (await sourcePhoto()).resize(width, height, { fit: 'cover' }).removeAlpha().toColourspace('srgb').raw().toBuffer();
  let seed = 0x2545f491;
  for (let i = 0; i < raw.length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    raw[i] = Math.max(0, Math.min(255, raw[i]! + ((seed & 31) - 15)));
  }
  return raw;
}

async function encode(name: string, width: number, height: number, format: (s: Sharp) => Sharp, mime: string): Promise<BenchImage> {
  const raw = await photoPixels(width, height);
  const data = await format(sharp(raw, { raw: { width, height, channels: 3 } })).toBuffer();
  return { name, mime, width, height, data };
}

/** 12 MP JPEG (4000×3000, like a phone camera), 1 MP PNG (a screenshot or scan), 3 MP WebP (a browser capture). */
export async function benchImages(): Promise<BenchImage[]> {
  return [
    await encode('12MP JPEG', 4000, 3000, (s) => s.jpeg({ quality: 90 }), 'image/jpeg'),
    await encode('1MP PNG', 1152, 864, (s) => s.png(), 'image/png'),
    await encode('3MP WebP', 2048, 1536, (s) => s.webp({ quality: 82 }), 'image/webp'),
  ];
}
