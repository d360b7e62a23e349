import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { flagProblem } from '../../bench/cli.js';
import { SERVER_MALLOC_ENV, withServerMallocEnv } from '../../scripts/malloc-env.mjs';
import { parentGone } from '../../scripts/parent-watch.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

describe('bench and long-run flags', () => {
  const known = ['scale', 'out'];

  it('accepts known flags with values, and nothing at all', () => {
    expect(flagProblem(known, [])).toBeNull();
    expect(flagProblem(known, ['--scale', '2', '--out', '/tmp/x.json'])).toBeNull();
    expect(flagProblem(known, ['--scale', '-1'])).toBeNull(); // a value may start with one dash
  });

  it('refuses an unknown or mistyped flag, a bare word and a --name=value form', () => {
    expect(flagProblem(known, ['--sacle', '2'])).toMatch(/unknown argument "--sacle"/);
    expect(flagProblem(known, ['2'])).toMatch(/unknown argument "2"/);
    expect(flagProblem(known, ['--scale=2'])).toMatch(/unknown argument "--scale=2"/);
  });

  it('refuses a known flag without its value', () => {
    expect(flagProblem(known, ['--scale'])).toBe('--scale needs a value');
    expect(flagProblem(known, ['--scale', '--out', 'x'])).toBe('--scale needs a value');
  });

  it('answers --help and -h', () => {
    expect(flagProblem(known, ['--help'])).toBe('help');
    expect(flagProblem(known, ['--scale', '2', '-h'])).toBe('help');
  });

  it('npm run bench -- --help prints the usage and starts nothing (it used to run the whole bench)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: npm run bench/);
    expect(run.stderr).not.toMatch(/generating images/);
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--scael', '2'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown argument "--scael"/);
  });

  it('bench/analyze.ts answers --help, and an unknown flag or a missing value with exit 2, before loading a model', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'bench/analyze.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npx tsx bench\/analyze.ts/);
    const unknown = run('--rusn', '5');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--rusn'[\s\S]*usage:/);
    expect(unknown.stdout).not.toMatch(/runs per image/);
    const missing = run('--runs');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--runs <value>' argument missing/);
    const zero = run('--runs', '0');
    expect(zero.status).toBe(2);
    expect(zero.stderr).toMatch(/--runs must be a whole number above 0, not "0"/);
  });

  it('bench/http-floor.ts answers --help, and a bad flag or run count with exit 2, before it listens', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'bench/http-floor.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npx tsx bench\/http-floor.ts/);
    for (const args of [['--rusn', '5'], ['--runs'], ['--runs', '2'], ['--runs', 'x']]) {
      const bad = run(...args);
      expect(bad.status, args.join(' ')).toBe(2);
      expect(bad.stderr).toMatch(/usage: npx tsx bench\/http-floor.ts/);
      expect(bad.stdout).not.toMatch(/\| image \|/);
    }
  });
});

describe("the server launcher's glibc tunables", () => {
  it('are the two variables on Linux and nothing elsewhere', () => {
    if (process.platform === 'linux') expect(SERVER_MALLOC_ENV).toEqual({ MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' });
    else expect(SERVER_MALLOC_ENV).toEqual({});
  });

  it('are added without overriding an explicit value or touching the input', () => {
    const input = { PATH: '/bin', MALLOC_ARENA_MAX: '4' };
    const env = withServerMallocEnv(input);
    expect(input).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '4' });
    expect(env.PATH).toBe('/bin');
    expect(env.MALLOC_ARENA_MAX).toBe('4');
    if (process.platform === 'linux') expect(env.MALLOC_MMAP_THRESHOLD_).toBe('131072');
  });
});

describe("npm run serve's launcher (scripts/serve.mjs)", () => {
  /** Starts `parent` → launcher → server; resolves with the parent and the server's URL once it listens. */
  async function startUnderParent(dataDir: string) {
    const script =
      "const c = require('child_process').spawn(process.execPath, ['scripts/serve.mjs'], { stdio: ['ignore', 'inherit', 'inherit'] });" +
      'console.log(JSON.stringify({ launcherPid: c.pid })); setInterval(() => {}, 1000);';
    const parent = spawn(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { ...process.env, TIREWEAR_DATA_DIR: dataDir, TIREWEAR_PORT: '0', TIREWEAR_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    parent.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    parent.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const match = /"url":"(http:[^"]+)"/.exec(output);
        if (match) {
          clearInterval(timer);
          resolve(match[1]!);
        }
      }, 50);
      setTimeout(() => {
        clearInterval(timer);
        reject(new Error(`the server did not start:\n${output}`));
      }, 60_000);
    });
    const launcherPid = Number(/"launcherPid":(\d+)/.exec(output)?.[1]);
    return { parent, url, launcherPid };
  }

  it('counts its parent gone when re-parented (POSIX) or when that process no longer runs (Windows keeps the ppid)', () => {
    const refuse = (code: string) => () => {
      throw Object.assign(new Error(code), { code });
    };
    expect(parentGone(100, { ppid: () => 1, kill: () => undefined })).toBe(true);
    expect(parentGone(100, { ppid: () => 100, kill: () => undefined })).toBe(false);
    expect(parentGone(100, { ppid: () => 100, kill: refuse('ESRCH') })).toBe(true);
    expect(parentGone(100, { ppid: () => 100, kill: refuse('EPERM') })).toBe(false); // another user's: still there
    expect(parentGone(process.ppid)).toBe(false);
  });

  it('stops the server when its parent (npm) is killed without passing the signal on (POSIX: re-parented)', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tirewear-launcher-'));
    const { parent, url, launcherPid } = await startUnderParent(dataDir);
    try {
      expect((await fetch(`${url}/api/v1/health`)).status).toBe(200);
      parent.kill('SIGKILL');
      // the launcher notices within a second and stops the server as by SIGTERM, which lets the port go
      await vi.waitFor(
        async () => {
          await expect(fetch(`${url}/api/v1/health`)).rejects.toThrow();
        },
        { timeout: 20_000, interval: 250 },
      );
    } finally {
      parent.kill('SIGKILL');
      try {
        process.kill(launcherPid, 'SIGTERM'); // a launcher that failed the test: its server goes with it
      } catch {
        // gone, as it should be
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
