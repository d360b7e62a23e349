/**
 * A tiny Y4M (YUV4MPEG2, 4:2:0) video made from a still photo, for Chromium's
 * --use-file-for-fake-video-capture: the webcam then "films" a tire.
 */
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

/** Full-range BT.601 RGB → I420 planes (what the `C420jpeg` tag declares). */
function toI420(rgb: Buffer, width: number, height: number): Buffer {
  const ySize = width * height;
  const cw = width / 2;
  const out = Buffer.alloc(ySize + 2 * (ySize / 4));
  for (let i = 0; i < ySize; i++) {
    const r = rgb[i * 3]!,
      g = rgb[i * 3 + 1]!,
      b = rgb[i * 3 + 2]!;
    out[i] = clamp(0.299 * r + 0.587 * g + 0.114 * b);
  }
  for (let y = 0; y < height / 2; y++) {
    for (let x = 0; x < cw; x++) {
      let r = 0,
        g = 0,
        b = 0;
      for (const [dx, dy] of [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ] as const) {
        const p = ((y * 2 + dy) * width + x * 2 + dx) * 3;
        r += rgb[p]!;
        g += rgb[p + 1]!;
        b += rgb[p + 2]!;
      }
      r /= 4;
      g /= 4;
      b /= 4;
      out[ySize + y * cw + x] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b);
      out[ySize + ySize / 4 + y * cw + x] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b);
    }
  }
  return out;
}

export async function writeY4mFromImage(imagePath: string, outPath: string, width = 640, height = 480, frames = 3): Promise<void> {
  const rgb = await sharp(imagePath).rotate().resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer();
  const frame = toI420(rgb, width, height);
  const header = Buffer.from(`YUV4MPEG2 W${width} H${height} F10:1 Ip A1:1 C420jpeg\n`, 'ascii');
  const parts: Buffer[] = [header];
  for (let i = 0; i < frames; i++) parts.push(Buffer.from('FRAME\n', 'ascii'), frame);
  await writeFile(outPath, Buffer.concat(parts));
}
