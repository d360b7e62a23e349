/**
 * Renders build/icon.svg to the PNGs electron-builder and the app use:
 *   icon.png (1024, the source electron-builder converts to .icns and .ico),
 *   icons/<n>x<n>.png (the Linux icon set; 512 is also the Linux window icon),
 *   tray.png (32, the Windows and Linux tray icon),
 *   trayTemplate.png and trayTemplate@2x.png (16 and 32: the macOS menu-bar icon, a template image:
 *   black and transparent only, which macOS tints for light and dark menu bars; 16 pt is its size).
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
    sharp(svg, { density: Math.max(72, (72 * size) / 1024) })
      .resize(size, size)
      .png()
      .toFile(path.join(here, file));
  await mkdir(path.join(here, 'icons'), { recursive: true });
  await render(1024, 'icon.png');
  for (const size of [512, 256, 128, 64, 48, 32, 16]) await render(size, path.join('icons', `${size}x${size}.png`));
  await render(32, 'tray.png');
  // the tire's silhouette from the same source: tread ring and hub, the rim cut out
  const tread = /<g fill="#15181c">([\s\S]*?)<\/g>/.exec(svg.toString())?.[1];
  if (!tread) throw new Error('icon.svg: the tread group (fill #15181c) was not found');
  const template = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024" viewBox="0 0 1024 1024">' +
      '<defs><mask id="rim"><rect width="1024" height="1024" fill="white"/><circle cx="512" cy="512" r="215" fill="black"/></mask></defs>' +
      `<g fill="black" mask="url(#rim)">${tread}</g><circle cx="512" cy="512" r="90" fill="black"/></svg>`,
  );
  for (const [size, file] of [
    [16, 'trayTemplate.png'],
    [32, 'trayTemplate@2x.png'],
  ] as const) {
    await sharp(template, { density: 72 }).resize(size, size).png().toFile(path.join(here, file));
  }
}

await main();
