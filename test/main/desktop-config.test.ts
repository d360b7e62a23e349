import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/config.js';
import { desktopDataDir, devUserDataPath, keepApiRunningInTray, loadDesktopConfig, type DesktopPaths } from '../../src/main/desktop-config.js';

// real Ed25519 public keys: the config checks the key it loads
const publicPem = () => generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
const PEM = publicPem();

let tmp: string;
let paths: DesktopPaths;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'tirewear-desktop-'));
  const appPath = path.join(tmp, 'resources', 'app.asar');
  await mkdir(path.join(appPath, 'resources'), { recursive: true });
  await writeFile(path.join(appPath, 'resources', 'license-public.pem'), PEM);
  paths = { appPath, userDataPath: path.join(tmp, 'userData'), resourcesPath: path.join(tmp, 'resources'), isPackaged: true };
});

afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function writeSettings(settings: unknown): Promise<string> {
  const dataDir = path.join(paths.userDataPath, 'data');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path.join(dataDir, 'settings.json'), typeof settings === 'string' ? settings : JSON.stringify(settings));
  return dataDir;
}

describe('desktop config', () => {
  it('keeps data in the OS user-data folder, models beside the asar, the UI inside it', () => {
    const config = loadDesktopConfig({}, paths);
    expect(config.dataDir).toBe(path.join(paths.userDataPath, 'data'));
    expect(config.imagesDir).toBe(path.join(paths.userDataPath, 'data', 'images'));
    expect(config.modelsDir).toBe(path.join(paths.resourcesPath, 'models'));
    expect(config.shippedModelsDir).toBe(config.modelsDir); // what a shop calibration starts from
    expect(config.rendererDir).toBe(path.join(paths.appPath, 'out', 'renderer'));
    expect(config.licensePublicKeyPem).toBe(PEM);
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8787);
  });

  it('uses the repo models folder when running from source', () => {
    const config = loadDesktopConfig({}, { ...paths, isPackaged: false });
    expect(config.modelsDir).toBe(path.join(paths.appPath, 'models'));
  });

  it('takes the port from settings.json and lets the environment override it', async () => {
    await writeSettings({ port: 9123 });
    expect(loadDesktopConfig({}, paths).port).toBe(9123);
    expect(loadDesktopConfig({ TIREWEAR_PORT: '9200' }, paths).port).toBe(9200);
  });

  it('lets TIREWEAR_DATA_DIR move the data, so each test run gets its own folder', () => {
    const other = path.join(tmp, 'e2e-data');
    const config = loadDesktopConfig({ TIREWEAR_DATA_DIR: other }, paths);
    expect(config.dataDir).toBe(other);
    expect(config.imagesDir).toBe(path.join(other, 'images'));
  });

  it('an installed app keeps its own license key and UI whatever the environment says; from source both can be set', async () => {
    const otherPem = publicPem();
    const otherUi = path.join(tmp, 'other-ui');
    const env = { TIREWEAR_LICENSE_PUBLIC_KEY: otherPem, TIREWEAR_RENDERER_DIR: otherUi };
    const installed = loadDesktopConfig(env, paths);
    expect(installed.licensePublicKeyPem).toBe(PEM);
    expect(installed.rendererDir).toBe(path.join(paths.appPath, 'out', 'renderer'));
    const fromSource = loadDesktopConfig(env, { ...paths, isPackaged: false });
    expect(fromSource.licensePublicKeyPem).toBe(otherPem);
    expect(fromSource.rendererDir).toBe(otherUi);
  });

  it('reports a broken settings file as a ConfigError naming the file', async () => {
    await writeSettings('{ "port": ');
    expect(() => loadDesktopConfig({}, paths)).toThrow(ConfigError);
    expect(() => loadDesktopConfig({}, paths)).toThrow(/settings\.json/);
  });
});

describe('keepApiRunningInTray', () => {
  it('is off unless settings.json turns it on', async () => {
    const dataDir = path.join(paths.userDataPath, 'data');
    expect(keepApiRunningInTray(dataDir)).toBe(false);
    await writeSettings({ keepApiRunningInTray: true });
    expect(keepApiRunningInTray(dataDir)).toBe(true);
    await writeSettings({ keepApiRunningInTray: 'yes' });
    expect(keepApiRunningInTray(dataDir)).toBe(false);
  });

  it('is off when settings.json is unreadable, so the window can still close', async () => {
    const dataDir = await writeSettings('not json');
    expect(keepApiRunningInTray(dataDir)).toBe(false);
  });
});

describe('development user data', () => {
  it("lives beside the installed app's, never in it", () => {
    const appData = path.join('/home/shop', '.config');
    expect(devUserDataPath(appData)).toBe(path.join(appData, 'TireWear-dev'));
    expect(devUserDataPath(appData)).not.toBe(path.join(appData, 'TireWear'));
  });
});

describe('the data folder on Windows', () => {
  it('is under %LOCALAPPDATA% (not the roaming profile) for a new installation; elsewhere in userData', () => {
    const localAppDataPath = path.join(tmp, 'Local');
    const userDataPath = path.join(tmp, 'Roaming', 'TireWear');
    expect(desktopDataDir({ userDataPath, localAppDataPath })).toBe(path.join(localAppDataPath, 'TireWear', 'data'));
    expect(desktopDataDir({ userDataPath: path.join(tmp, 'Roaming', 'TireWear-dev'), localAppDataPath })).toBe(
      path.join(localAppDataPath, 'TireWear-dev', 'data'),
    );
    expect(desktopDataDir({ userDataPath })).toBe(path.join(userDataPath, 'data')); // macOS, Linux
    const config = loadDesktopConfig({}, { ...paths, localAppDataPath });
    expect(config.dataDir).toBe(path.join(localAppDataPath, 'userData', 'data'));
    expect(config.imagesDir).toBe(path.join(localAppDataPath, 'userData', 'data', 'images'));
  });

  it('stays in the roaming profile where an earlier version already keeps its database', async () => {
    const localAppDataPath = path.join(tmp, 'Local');
    const dataDir = await writeSettings({ port: 9123 });
    await writeFile(path.join(dataDir, 'tirewear.db'), '');
    const config = loadDesktopConfig({}, { ...paths, localAppDataPath });
    expect(config.dataDir).toBe(dataDir);
    expect(config.port).toBe(9123); // its settings.json with it
  });
});
