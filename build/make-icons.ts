/**
 * Renders build/icon.svg to the PNGs electron-builder and the app use:
 *   icon.png (1024, the source electron-builder converts to .icns and .ico),
 *   icons/<n>x<n>.png (the Linux icon set; 512 is also the Linux window icon),
 *   tray.png (32, the tray / menu-bar icon).
 * Run: npx tsx build/make-icons.ts
 */
import path from 'node:path';
import { mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const here = path.dirname(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const svg = await readFile(path.join(here, 'icon.svg'));
  const render = (size: number, file: string) =>
    sharp(svg, { density: Math.max(72, (72 * size) / 1024) }).resize(size, size).png().toFile(path.join(here, file));
  await mkdir(path.join(here, 'icons'), { recursive: true });
  await render(1024, 'icon.png');
  for (const size of [512, 256, 128, 64, 48, 32, 16]) await render(size, path.join('icons', `${size}x${size}.png`));
  await render(32, 'tray.png');
}

await main();
