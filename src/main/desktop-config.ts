/**
 * The desktop's Config: the same loadConfig as `npm run serve`, on a base whose paths point
 * at the OS user-data folder and at what electron-builder packs (asar, extraResources).
 */
import path from 'node:path';
import { defaultConfig, loadConfig, readSettingsFile, type Config, type Env } from '../core/config.js';

export interface DesktopPaths {
  /** app.getAppPath(): the repo root in dev, `…/resources/app.asar` when packaged. */
  appPath: string;
  /** app.getPath('userData'). */
  userDataPath: string;
  /** process.resourcesPath: where extraResources (the models) land when packaged. */
  resourcesPath: string;
  isPackaged: boolean;
}

export function desktopBaseConfig(paths: DesktopPaths): Config {
  const base = defaultConfig(paths.appPath);
  const dataDir = path.join(paths.userDataPath, 'data');
  const modelsDir = paths.isPackaged ? path.join(paths.resourcesPath, 'models') : base.modelsDir;
  return {
    ...base,
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    modelsDir,
    shippedModelsDir: modelsDir,
    rendererDir: path.join(paths.appPath, 'out', 'renderer'),
    // A path, not PEM text: readPem reads it (from inside the asar when packaged).
    licensePublicKeyPem: path.join(paths.appPath, 'resources', 'license-public.pem'),
  };
}

/**
 * Env still wins (TIREWEAR_DATA_DIR gives each e2e run its own folder); CLI flags are not
 * read because Electron and Chromium put their own switches in process.argv.
 */
export function loadDesktopConfig(env: Env, paths: DesktopPaths): Config {
  return loadConfig(env, [], desktopBaseConfig(paths));
}

/** Read at each window close, so a change made in Settings applies without a restart. */
export function keepApiRunningInTray(dataDir: string): boolean {
  try {
    return readSettingsFile(dataDir).keepApiRunningInTray === true;
  } catch {
    return false;
  }
}
