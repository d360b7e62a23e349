/**
 * Checks the packaged app on a machine without the Electron binary: electron-builder packs a
 * Linux `dir` build around a fake Electron executable (no download, no native rebuild, no fuses),
 * then the packed app.asar is extracted and its main process run under Node with `electron`
 * stubbed (test/main/fixtures/electron-stub). A dependency missing from the package, a file
 * pattern that drops out/ or the models, or a broken asarUnpack shows up here.
 * Run after `npx electron-vite build`: node build/check-package.mjs   (takes about a minute)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const yaml = require('js-yaml');
const asar = require('@electron/asar');

const work = mkdtempSync(path.join(os.tmpdir(), 'tirewear-package-'));
const fakeElectron = path.join(work, 'electron-dist');
mkdirSync(fakeElectron);
writeFileSync(path.join(fakeElectron, 'electron'), '#!/bin/sh\nexit 0\n');
chmodSync(path.join(fakeElectron, 'electron'), 0o755);

const config = yaml.load(readFileSync(path.join(root, 'electron-builder.yml'), 'utf8'));
delete config.electronFuses;
config.npmRebuild = false;
config.electronDist = fakeElectron;
config.directories = { ...config.directories, output: path.join(work, 'dist') };
const configFile = path.join(work, 'electron-builder.json');
writeFileSync(configFile, JSON.stringify(config));

try {
  execFileSync(path.join(root, 'node_modules', '.bin', 'electron-builder'), ['--linux', 'dir', '--config', configFile], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const resources = path.join(work, 'dist', 'linux-unpacked', 'resources');
  const app = path.join(work, 'app');
  asar.extractAll(path.join(resources, 'app.asar'), app);
  cpSync(path.join(resources, 'models'), path.join(app, 'models'), { recursive: true });

  const userData = path.join(work, 'user-data');
  const stdout = execFileSync(
    process.execPath,
    ['--import', path.join(root, 'test', 'main', 'fixtures', 'electron-stub', 'register.mjs'), 'out/main/index.js'],
    { cwd: app, env: { PATH: process.env.PATH, SMOKE_USER_DATA: userData, SMOKE_PACKAGED: '1', TIREWEAR_PORT: '0' }, timeout: 60_000 },
  ).toString();
  const reports = stdout.split('\n').filter((line) => line.startsWith('{"event"')).map((line) => JSON.parse(line));
  const loaded = reports.find((r) => r.event === 'loaded');
  const dialog = reports.find((r) => r.event === 'dialog');
  const megabytes = (file) => (statSync(file).size / 1e6).toFixed(1);
  console.log(`app.asar: ${megabytes(path.join(resources, 'app.asar'))} MB`);
  console.log(`models: ${execFileSync('du', ['-sh', path.join(resources, 'models')]).toString().split('\t')[0]}`);
  console.log(`unpacked native modules: ${execFileSync('du', ['-sh', path.join(resources, 'app.asar.unpacked')]).toString().split('\t')[0]}`);
  if (dialog) throw new Error(`the packaged app showed a startup dialog: ${dialog.title}: ${dialog.message}`);
  if (!loaded || loaded.health !== 200 || loaded.page !== 200 || !loaded.html.includes('id="root"')) {
    throw new Error(`the packaged app did not serve its UI: ${stdout}`);
  }
  console.log(`packaged main process served the UI; models: ${loaded.modelVersion} (from resources/models)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
