/**
 * A calibration's models on disk: written to a folder of their own under
 * `<dataDir>/calibrations`, loaded, and named in settings.json, or nothing left behind.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Analyzer } from '../../analysis/analyzer.js';
import { writeCalibratedModels } from '../../analysis/calibration-files.js';
import { shopVersion, type ShopFit } from '../../analysis/shop-calibration.js';
import type { Config } from '../../config.js';
import { updateSettingsFile } from '../../settings-file.js';

const CALIBRATIONS = 'calibrations';

/**
 * A version and a folder of its own for a new calibration, the folder created here (a plain mkdir
 * claims it: nothing else can have made it in between). A second calibration in the same minute
 * gets `…+shop.20261124T0730.2` in `…_shop.20261124T0730.2`: no two calibrations share a version.
 */
async function claimFolder(root: string, version: string): Promise<{ version: string; dir: string }> {
  await mkdir(root, { recursive: true });
  for (let i = 1; ; i++) {
    const candidate = i === 1 ? version : `${version}.${i}`;
    const dir = path.join(root, candidate.replace(/[^A-Za-z0-9._-]/g, '_'));
    try {
      await mkdir(dir);
      return { version: candidate, dir };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

export interface ShopModels {
  config: Pick<Config, 'dataDir' | 'shippedModelsDir'>;
  /** The shipped manifest the calibration starts from. */
  base: Record<string, unknown>;
  fit: ShopFit;
  created: Date;
  /** The readings the fit used, one line per scan read (the record's labelsSha256). */
  labels: string;
  load: (modelsDir: string) => Promise<Analyzer>;
  /** Throws once the server is shutting down. */
  checkOpen: () => void;
}

/** The calibrated models written, loaded and named in settings.json: ready to swap in. */
export async function writeShopModels(input: ShopModels): Promise<{ next: Analyzer; outDir: string; written: Record<string, unknown> }> {
  const { config, base, fit, created, load, checkOpen } = input;
  checkOpen();
  const { version, dir: outDir } = await claimFolder(path.join(config.dataDir, CALIBRATIONS), shopVersion(String(base.version), created));
  let next: Analyzer | null = null;
  try {
    const labelsSha256 = createHash('sha256').update(input.labels).digest('hex');
    const written = await writeCalibratedModels({ baseDir: config.shippedModelsDir, base, fit, outDir, created, version, labelsSha256 });
    checkOpen();
    next = await load(outDir);
    checkOpen();
    await updateSettingsFile(config.dataDir, (file) => ({ ...file, modelsDir: path.relative(config.dataDir, outDir) }));
    return { next, outDir, written };
  } catch (error) {
    // nothing is left behind: the folder was new (claimFolder) and nothing names it yet
    await next?.close();
    await rm(outDir, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
}
