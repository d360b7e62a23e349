/**
 * Runs the *built* main process (out/main/index.js, from `npx electron-vite build`) under
 * plain Node with `electron` stubbed: proves the bundle's imports resolve, the preload sits
 * where main looks for it, and the window gets the UI from the in-process core.
 * Skipped when nothing is built; `npm test` builds first.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP_CSP } from '../../src/main/security.js';
import { CHANNELS } from '../../src/preload/channels.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const built = existsSync(path.join(root, 'out', 'main', 'index.js')) && existsSync(path.join(root, 'out', 'renderer', 'index.html'));
const register = path.join(import.meta.dirname, 'fixtures', 'electron-stub', 'register.mjs');

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

describe.skipIf(!built)('built main process', () => {
  it('serves the built UI to its window with the CSP, registers the bridge, and quits cleanly', async () => {
    const reports = await runMain({});
    const window = reports.find((r) => r.event === 'window');
    const loaded = reports.find((r) => r.event === 'loaded');
    expect(window).toMatchObject({ preloadExists: true });
    expect(String(window?.preload)).toMatch(/out[\\/]preload[\\/]index\.cjs$/);
    expect(loaded).toMatchObject({ health: 200, page: 200, csp: APP_CSP });
    expect(String(loaded?.url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(String(loaded?.html)).toContain('<div id="root">');
    expect(reports.filter((r) => r.event === 'ipc').map((r) => r.channel).sort()).toEqual(Object.values(CHANNELS).sort());
    expect(reports.at(-1)?.event).toBe('quit');
  });

  it('as an installed app, writes its log into the data folder', async () => {
    const reports = await runMain({ SMOKE_PACKAGED: '1', TIREWEAR_LOG_LEVEL: 'info' });
    expect(reports.at(-1)?.event).toBe('quit');
    const log = await readFile(path.join(userData, 'data', 'logs', 'tirewear.log'), 'utf8');
    expect(log).toContain('Server listening');
  });
});
