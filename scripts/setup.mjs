#!/usr/bin/env node
// One-step install for the headless server: dependencies from the lock file, then the UI build.
// The Electron binary is only needed for the desktop window. Since Electron 42 the `electron`
// package has no postinstall: nothing is downloaded by the install, so machines that cannot reach
// its download host install as any other; the binary is fetched the first time Electron is started
// (`npm run dev`, `npm run start`), or now with `npm run setup -- --desktop`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const desktop = process.argv.includes('--desktop');

/** npm and npx are .cmd files on Windows, run through its shell; node itself is not (its path may hold spaces). */
function run(cmd, args, hint = '', shell = process.platform === 'win32') {
  console.log(`\n> ${cmd} ${args.join(' ')}`);
  const result = spawnSync(cmd, args, { stdio: 'inherit', shell });
  if (result.status !== 0) {
    console.error(`\nsetup failed: "${cmd} ${args.join(' ')}" exited with ${result.status ?? result.signal}${hint}`);
    process.exit(result.status ?? 1);
  }
}

run(
  'npm',
  [existsSync('package-lock.json') ? 'ci' : 'install', '--no-audit', '--no-fund'],
  '\nWhere no prebuilt better-sqlite3 binary can be downloaded it is compiled from source, which needs python3, ' +
    'make and a C++ compiler (Debian: apt-get install -y python3 make g++; Windows: the Visual Studio Build Tools).',
);
if (desktop) {
  // the package's own installer (its `install-electron` bin): downloads into node_modules/electron/dist
  const installer = createRequire(import.meta.url).resolve('electron/install.js');
  run(process.execPath, [installer], '\nThe Electron binary could not be downloaded (see above).', false);
}
run('npx', ['electron-vite', 'build']);
console.log('\nTireWear is installed. Start the server with: npm run serve');
