/**
 * Checks the packaged app on a machine without the Electron binary: electron-builder packs a
 * Linux `dir` build around a fake Electron executable (no download, no native rebuild, no fuses),
 * then
 *  1. the packed app.asar's header is read (build/asar-layout.mjs): every *.node, *.so, *.so.*,
 *     *.dll and *.dylib must be marked unpacked and exist under app.asar.unpacked (dlopen cannot
 *     read inside an asar), better-sqlite3's, sharp's (with libvips) and onnxruntime's binaries
 *     must be there, and out/renderer/index.html and resources/license-public.pem must be packed
 *     inside the asar (the app reads them from there), the key the same as the repository's;
 *  2. app.asar is extracted and its main process run under Node with `electron` stubbed
 *     (test/main/fixtures/electron-stub): it must serve its UI with the models from resources/.
 * A dependency missing from the package, a file pattern that drops out/ or the models, or a
 * broken asarUnpack fails it. Step 2 runs from an extracted folder, so only step 1 sees asarUnpack.
 * Run after `npx electron-vite build`: node build/check-package.mjs   (about 10 s: 8–10 s measured on 2 cores)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkAsarLayout } from './asar-layout.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const yaml = require('js-yaml');
const asar = require('@electron/asar');

const started = Date.now();
/** Native binaries the app loads at start (linux build, the host's CPU); the layout check alone would pass without them. */
const EXPECTED_NATIVES = [
  ['better-sqlite3', /^node_modules\/better-sqlite3\/build\/Release\/better_sqlite3\.node$/],
  ['sharp', /^node_modules\/@img\/sharp-linux-[^/]+\/lib\/sharp-linux-[^/]+\.node$/],
  ['libvips', /^node_modules\/@img\/sharp-libvips-linux-[^/]+\/lib\/libvips-cpp\.so/],
  ['onnxruntime-node', /^node_modules\/onnxruntime-node\/bin\/napi-v\d+\/linux\/[^/]+\/onnxruntime_binding\.node$/],
  ['libonnxruntime', /^node_modules\/onnxruntime-node\/bin\/napi-v\d+\/linux\/[^/]+\/libonnxruntime\.so/],
];

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
  const appAsar = path.join(resources, 'app.asar');
  const problems = [];

  // 1. The archive's layout, from its header.
  const { problems: layout, natives } = checkAsarLayout(appAsar);
  problems.push(...layout);
  for (const [what, pattern] of EXPECTED_NATIVES) {
    if (!natives.some((n) => pattern.test(n.file))) problems.push(`${what} is not in the package (no file matches ${pattern})`);
  }
  if (!layout.some((p) => p.startsWith('resources/license-public.pem'))) {
    const packed = asar.extractFile(appAsar, 'resources/license-public.pem', false);
    if (!packed.equals(readFileSync(path.join(root, 'resources', 'license-public.pem')))) {
      problems.push("resources/license-public.pem in app.asar differs from the repository's");
    }
  }

  const megabytes = (file) => (statSync(file).size / 1e6).toFixed(1);
  const du = (dir) => (existsSync(dir) ? execFileSync('du', ['-sh', dir]).toString().split('\t')[0] : 'missing');
  console.log(`app.asar: ${megabytes(appAsar)} MB`);
  console.log(`models: ${du(path.join(resources, 'models'))}`);
  console.log(
    `unpacked native modules: ${du(`${appAsar}.unpacked`)} (${natives.length} native files, all outside the asar: ${layout.length === 0 ? 'yes' : 'NO'})`,
  );

  // 2. The main process, run from the extracted app with the models next to it.
  try {
    const app = path.join(work, 'app');
    asar.extractAll(appAsar, app);
    cpSync(path.join(resources, 'models'), path.join(app, 'models'), { recursive: true });
    const userData = path.join(work, 'user-data');
    const stdout = execFileSync(
      process.execPath,
      ['--import', path.join(root, 'test', 'main', 'fixtures', 'electron-stub', 'register.mjs'), 'out/main/index.js'],
      { cwd: app, env: { PATH: process.env.PATH, SMOKE_USER_DATA: userData, SMOKE_PACKAGED: '1', TIREWEAR_PORT: '0' }, timeout: 60_000 },
    ).toString();
    const reports = stdout
      .split('\n')
      .filter((line) => line.startsWith('{"event"'))
      .map((line) => JSON.parse(line));
    const loaded = reports.find((r) => r.event === 'loaded');
    const dialog = reports.find((r) => r.event === 'dialog');
    if (dialog) problems.push(`the packaged app showed a startup dialog: ${dialog.title}: ${dialog.message}`);
    if (!loaded || loaded.health !== 200 || loaded.page !== 200 || !loaded.html.includes('id="root"')) {
      problems.push(`the packaged app did not serve its UI: ${stdout}`);
    } else {
      console.log(`packaged main process served the UI; models: ${loaded.modelVersion} (from resources/models)`);
    }
  } catch (error) {
    problems.push(`running the packaged main process failed: ${error.message}${error.stdout?.length ? `\n${error.stdout}` : ''}`);
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (problems.length > 0) {
    console.error(`check-package FAILED (${seconds} s), ${problems.length} problem(s):`);
    for (const problem of problems) console.error(`  - ${problem}`);
    process.exitCode = 1;
  } else {
    console.log(`check-package passed in ${seconds} s`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
