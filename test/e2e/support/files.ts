/** Tire photos for the browser tests, and where screenshots go. */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { ROOT } from './app.js';

const HELDOUT = path.join(ROOT, 'test', 'fixtures', 'tires', 'heldout');

/**
 * Four of the engine's labelled synthetic tire photos, one per wear class from new to
 * worn (as labelled; the model decides what it sees), so a report shows every colour.
 */
export function tirePhotos(): string[] {
  const labels = path.join(HELDOUT, 'labels.csv');
  if (!existsSync(labels)) throw new Error(`No tire fixtures: ${labels} is missing`);
  const rows = readFileSync(labels, 'utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(',').map((cell) => cell.trim()))
    .map(([file = '', , wear = '']) => ({ file, wear }));
  return ['new', 'good', 'medium', 'worn'].map((wear) => {
    const row = rows.find((r) => r.wear === wear);
    if (!row) throw new Error(`No "${wear}" tire in ${labels}`);
    return path.join(HELDOUT, row.file);
  });
}

/**
 * Saves the viewport as `<name>.png`: into docs/screenshots when TIREWEAR_SCREENSHOTS=1
 * (refreshing the README's pictures, as small palette PNGs), otherwise into a temp dir,
 * so an ordinary test run leaves the work tree clean.
 */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.TIREWEAR_SCREENSHOTS === '1' ? path.join(ROOT, 'docs', 'screenshots') : path.join(os.tmpdir(), 'tirewear-e2e-shots');
  await mkdir(dir, { recursive: true });
  await sharp(await page.screenshot())
    .png({ palette: true, quality: 90, effort: 8 })
    .toFile(path.join(dir, `${name}.png`));
}
