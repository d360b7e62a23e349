/**
 * A shop calibration on disk: the base models' files copied byte for byte and a manifest with the
 * correction folded in (shop-calibration.ts, calibratedManifest). Written by `npm run calibrate`
 * and by the Settings screen's calibration (services/calibration.ts).
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isRecord, loadManifest, readVerifiedModels } from './manifest.js';
import { calibratedManifest, type ShopFit } from './shop-calibration.js';
import { renameRetrying } from '../storage/files.js';

type Json = Record<string, unknown>;

/**
 * manifest.json of `dir` as parsed JSON (unknown fields kept); null when there is none, `{}` when
 * it is not a JSON object (the load checks say what is wrong with it).
 */
export async function readManifestJson(dir: string): Promise<Json | null> {
  try {
    const value: unknown = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
    return isRecord(value) ? value : {};
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return {};
  }
}

/**
 * Writes the calibrated models into `outDir` and returns their manifest. The manifest goes last,
 * through a rename: a folder is never seen with new files and no manifest, or half a manifest.
 * The result then passes the server's own load checks (manifest in range, every file's sha256);
 * AppError MODEL_UNAVAILABLE when it does not.
 */
export async function writeCalibratedModels(options: {
  baseDir: string;
  base: Json;
  fit: ShopFit;
  outDir: string;
  created: Date;
  labelsSha256: string | null;
  /** Instead of the version calibratedManifest derives from the base's and the time. */
  version?: string;
}): Promise<Json> {
  const { baseDir, outDir } = options;
  const made = calibratedManifest(options.base, options.fit, { created: options.created, labelsSha256: options.labelsSha256 });
  const out = options.version === undefined ? made : { ...made, version: options.version };
  await mkdir(outDir, { recursive: true });
  const models = out.models as Record<string, { file: string }>;
  for (const entry of Object.values(models)) await copyFile(path.join(baseDir, entry.file), path.join(outDir, entry.file));
  const tmp = path.join(outDir, `.manifest.${process.pid}.tmp`);
  await writeFile(tmp, `${JSON.stringify(out, null, 2)}\n`);
  await renameRetrying(tmp, path.join(outDir, 'manifest.json'));
  await readVerifiedModels(outDir, await loadManifest(outDir));
  return out;
}
