/**
 * The desktop's Config: the same loadConfig as `npm run serve`, on a base whose paths point
 * at the OS user-data folder and at what electron-builder packs (asar, extraResources).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { defaultConfig, loadConfig, readSettingsFile, SQLITE_FILE_NAME, type Config, type Env } from '../core/config.js';

export interface DesktopPaths {
  /** app.getAppPath(): the repo root in dev, `…/resources/app.asar` when packaged. */
  appPath: string;
  /** app.getPath('userData'). */
  userDataPath: string;
  /** process.resourcesPath: where extraResources (the models) land when packaged. */
  resourcesPath: string;
  isPackaged: boolean;
  /**
   * Windows' %LOCALAPPDATA% (undefined elsewhere): `userData` is in the roaming profile there,
   * which domains copy at every sign-in and sign-out, so the database and photos go here instead.
   */
  localAppDataPath?: string | undefined;
}

/**
 * The data folder: `<userData>/data`, except on Windows, where it is
 * `%LOCALAPPDATA%\<app>\data` (not roamed) unless an earlier version already keeps a database in
 * the roaming one, which then stays where it is (moving a live database is not done behind the
 * shop's back; DESKTOP.md says how to move it).
 */
export function desktopDataDir(paths: Pick<DesktopPaths, 'userDataPath' | 'localAppDataPath'>): string {
  const roaming = path.join(paths.userDataPath, 'data');
  if (!paths.localAppDataPath || existsSync(path.join(roaming, SQLITE_FILE_NAME))) return roaming;
  return path.join(paths.localAppDataPath, path.basename(paths.userDataPath), 'data');
}

/**
 * Where `npm run dev` and `npm run start` keep their user data: beside the installed app's, not
 * in it, so a developer on a shop's PC never works on the shop's database or hub link, and is not
 * stopped by the installed app's single-instance lock.
 */
export function devUserDataPath(appDataPath: string): string {
  return path.join(appDataPath, 'TireWear-dev');
}

export function desktopBaseConfig(paths: DesktopPaths): Config {
  const base = defaultConfig(paths.appPath);
  const dataDir = desktopDataDir(paths);
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
 * Variables an installed app does not take from its environment: the key license codes must
 * verify against (one `setx` would let a shop sign its own pro codes) and the UI it serves with
 * the desktop bridge. Development, the e2e runs and `npm run serve` still take them.
 */
export const PACKAGED_IGNORES = ['TIREWEAR_LICENSE_PUBLIC_KEY', 'TIREWEAR_RENDERER_DIR'] as const;

/**
 * Env still wins (TIREWEAR_DATA_DIR gives each e2e run its own folder), except PACKAGED_IGNORES
 * in an installed app; CLI flags are not read because Electron and Chromium put their own
 * switches in process.argv.
 */
export function loadDesktopConfig(env: Env, paths: DesktopPaths): Config {
  const taken = { ...env };
  if (paths.isPackaged) for (const name of PACKAGED_IGNORES) delete taken[name];
  return loadConfig(taken, [], desktopBaseConfig(paths));
}

/** Read at each window close, so a change made in Settings applies without a restart. */
export function keepApiRunningInTray(dataDir: string): boolean {
  try {
    return readSettingsFile(dataDir).keepApiRunningInTray === true;
  } catch {
    return false;
  }
}
