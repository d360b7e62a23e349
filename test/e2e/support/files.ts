/** Tire photos for the browser tests, and where screenshots go. */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './app.js';

const TIRES_DIR = process.env.TIREWEAR_E2E_TIRES_DIR ?? path.join(ROOT, 'test', 'fixtures', 'tires');

/** The engine's synthetic tire renders (JPEG / PNG / WebP), sorted by name. */
export function tirePhotos(): string[] {
  if (!existsSync(TIRES_DIR)) throw new Error(`No tire fixtures in ${TIRES_DIR}`);
  return readdirSync(TIRES_DIR)
    .filter((name) => /\.(jpe?g|png|webp)$/i.test(name))
    .sort()
    .map((name) => path.join(TIRES_DIR, name));
}

/**
 * docs/screenshots when TIREWEAR_SCREENSHOTS=1 (refreshing the README's pictures),
 * otherwise a temp dir, so an ordinary test run leaves the work tree clean.
 */
export async function screenshotDir(): Promise<string> {
  const dir = process.env.TIREWEAR_SCREENSHOTS === '1' ? path.join(ROOT, 'docs', 'screenshots') : path.join(os.tmpdir(), 'tirewear-e2e-shots');
  await mkdir(dir, { recursive: true });
  return dir;
}
