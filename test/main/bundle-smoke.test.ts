/**
 * Runs the *built* main process (out/main/index.js, from `npx electron-vite build`) under
 * plain Node with `electron` stubbed: proves the bundle's imports resolve, the preload sits
 * where main looks for it, and the window gets the UI from the in-process core.
 * `npm test` (scripts/test.sh, and so .ci/run) builds first. Without a build, or with one older
 * than a file under src/{main,preload,core,shared} (the main bundle inlines src/core), this
 * fails when CI is set and otherwise is skipped with a warning: a stale bundle tests old code.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP_CSP } from '../../src/main/security.js';
import { CHANNELS } from '../../src/preload/channels.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const bundle = path.join(root, 'out', 'main', 'index.js');
const register = path.join(import.meta.dirname, 'fixtures', 'electron-stub', 'register.mjs');
/** CI=true/1/anything but 0 or false, as CI services set it. */
const ci = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/** Why out/ cannot be tested (missing, or older than a source the bundles are built from), or undefined. */
function buildProblem(): string | undefined {
  const missing = [bundle, path.join(root, 'out', 'renderer', 'index.html')].filter((file) => !existsSync(file));
  if (missing.length > 0) return `no build: ${missing.map((file) => path.relative(root, file)).join(' and ')} missing`;
  const builtAt = statSync(bundle).mtimeMs;
  const newer: string[] = [];
  for (const dir of ['main', 'preload', 'core', 'shared'].map((name) => path.join(root, 'src', name))) {
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      const full = path.join(dir, file);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (stat?.isFile() && stat.mtimeMs > builtAt) newer.push(path.relative(root, full));
    }
  }
  if (newer.length === 0) return undefined;
  const shown = newer.slice(0, 5).join(', ') + (newer.length > 5 ? ` and ${newer.length - 5} more` : '');
  return `stale build: out/main/index.js is older than ${shown}`;
}

const problem = buildProblem();
const rebuild = 'run `npx electron-vite build` first (`npm test` does)';
if (problem !== undefined && !ci) console.warn(`bundle-smoke.test.ts SKIPPED: ${problem}; ${rebuild}`);

let userData: string;

beforeEach(async () => {
  userData = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bundle-'));
});

afterEach(async () => {
  await rm(userData, { recursive: true, force: true });
});

type Report = { event: string } & Record<string, unknown>;

async function runMain(env: Record<string, string>): Promise<Report[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', register, 'out/main/index.js'], {
    cwd: root,
    timeout: 60_000,
    env: { PATH: process.env.PATH, SMOKE_USER_DATA: userData, TIREWEAR_PORT: '0', TIREWEAR_LOG_LEVEL: 'warn', ...env },
  });
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{"event"'))
    .map((line) => JSON.parse(line) as Report);
}

describe.runIf(problem !== undefined && ci)('build for the bundle smoke test (CI is set)', () => {
  it('exists and is newer than src/{main,preload,core,shared}', () => {
    expect.fail(`${problem}; ${rebuild}`);
  });
});

describe.skipIf(problem !== undefined)('built main process', () => {
  it('serves the built UI to its window with the CSP, registers the bridge, and quits cleanly', async () => {
    const reports = await runMain({});
    const window = reports.find((r) => r.event === 'window');
    const loaded = reports.find((r) => r.event === 'loaded');
    expect(window).toMatchObject({ preloadExists: true });
    expect(String(window?.preload)).toMatch(/out[\\/]preload[\\/]index\.cjs$/);
    expect(loaded).toMatchObject({ health: 200, page: 200, csp: APP_CSP });
    expect(String(loaded?.url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(String(loaded?.html)).toContain('<div id="root">');
    expect(
      reports
        .filter((r) => r.event === 'ipc')
        .map((r) => r.channel)
        .sort(),
    ).toEqual(Object.values(CHANNELS).sort());
    expect(reports.at(-1)?.event).toBe('quit');
  });

  it('as an installed app, writes its log into the data folder', async () => {
    const reports = await runMain({ SMOKE_PACKAGED: '1', TIREWEAR_LOG_LEVEL: 'info' });
    expect(reports.at(-1)?.event).toBe('quit');
    const log = await readFile(path.join(userData, 'data', 'logs', 'tirewear.log'), 'utf8');
    expect(log).toContain('Server listening');
  });
});
