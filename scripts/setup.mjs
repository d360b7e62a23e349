#!/usr/bin/env node
// One-step install for the headless server: dependencies from the lock file, then the UI build.
// The Electron binary is only needed for the desktop window; machines that cannot reach its
// download host (or do not want it) skip it. `npm run setup -- --desktop` downloads it too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const desktop = process.argv.includes('--desktop');
const env = { ...process.env };
if (!desktop) env.ELECTRON_SKIP_BINARY_DOWNLOAD = '1';

function run(cmd, args, hint = '') {
  console.log(`\n> ${cmd} ${args.join(' ')}`);
  const result = spawnSync(cmd, args, { stdio: 'inherit', env, shell: process.platform === 'win32' });
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
run('npx', ['electron-vite', 'build']);
console.log('\nTireWear is installed. Start the server with: npm run serve');
