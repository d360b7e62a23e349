/**
 * Every command-line tool answers --help (and -h) with its usage on stdout and exit 0, and refuses
 * flags it does not know with exit 2. `npm run serve` reads its flags through loadConfig
 * (src/core/config.ts), so its flag handling is checked here end to end as well.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../support/cli.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tw-cli-help-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One tool; a server that should have refused its flags but started is stopped by the timeout (code -1). */
const cli = (tool: string, args: readonly string[], env: Record<string, string> = {}) => runCli(tool, args, { env, timeoutMs: 20_000 });

describe('--help', () => {
  test.each([
    ['analyze', /usage: analyze PHOTO/],
    ['eval', /usage: npm run eval -- DIR/],
    ['calibrate', /usage: npm run calibrate -- DIR --out MODELS_DIR/],
    ['collect', /usage: TIREWEAR_API_KEY=tw_… npm run collect -- DIR/],
    ['license', /license issue --key PRIVATE\.pem --kind pack/],
  ])('%s --help prints its usage and exits 0', async (tool, usage) => {
    for (const flag of ['--help', '-h']) {
      const r = await cli(tool, [flag]);
      expect(r, `${tool} ${flag}`).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(usage);
    }
  });

  test('help wins over whatever else is on the line (an incomplete command is what --help is for)', async () => {
    expect(await cli('eval', ['--bootstrap', 'many', '--help'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/usage: npm run eval/) });
    expect(await cli('license', ['issue', '--kind', 'pack', '--help'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/--scans N/) });
  });

  test('serve --help lists the flags and exits 0 without starting', async () => {
    const r = await cli('serve', ['--help'], { TIREWEAR_DATA_DIR: dir, TIREWEAR_PORT: '0' });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/usage: npm run serve -- \[--FLAG VALUE/);
    for (const flag of ['--port', '--data-dir', '--lan-access', '--hub-url', '--analysis-concurrency']) expect(r.stdout).toContain(flag);
  });
});

describe('serve cannot start', () => {
  test('a data folder that is a file: exit 1 and a plain line on stderr naming it (the JSON log stays on stdout)', async () => {
    const notAFolder = path.join(dir, 'a-file');
    await writeFile(notAFolder, 'x');
    const r = await cli('serve', ['--port', '0', '--data-dir', notAFolder]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tirewear: could not start: .*the data folder .*a-file must be a folder TireWear can write/m);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace for a person to read
  });

  test('a data folder that cannot be written: the hint is about the folder, not the port', async (context) => {
    // chmod does not stop root: as root a read-only mount is real; otherwise a folder without write permission
    const readOnly = path.join(dir, 'read-only');
    await mkdir(readOnly);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tirewear-ro', readOnly]);
      if (mounted.status !== 0) return context.skip();
    } else {
      await chmod(readOnly, 0o555);
    }
    try {
      const r = await cli('serve', ['--port', '0', '--data-dir', readOnly]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^tirewear: could not start: .*the data folder .*read-only must be a folder TireWear can write/m);
      expect(r.stderr).not.toMatch(/choose a port/);
    } finally {
      if (asRoot) spawnSync('umount', [readOnly]);
    }
  });
});

describe('analyze refuses what it cannot read, saying why, without reading it', () => {
  test.each([
    [[], 2, /analyze: which photo\?/],
    [['a.jpg', 'b.jpg'], 2, /analyze: one photo at a time, got 2/],
    [['/nonexistent/tire.jpg'], 1, /Cannot read \/nonexistent\/tire\.jpg: no such file\./],
    [['.'], 1, /Cannot read \.: it is a folder\./],
    [['/dev/zero'], 1, /Cannot read \/dev\/zero: it is not a regular file\./], // once read until killed
  ] as const)('%j: exit %i', async (args, code, message) => {
    const r = await cli('analyze', args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  test('a photo over 10 MiB is FILE_TOO_LARGE from its size alone', async () => {
    const big = path.join(dir, 'big.jpg');
    await writeFile(big, Buffer.alloc(11 * 1024 * 1024, 0xff));
    const r = await cli('analyze', [big]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr.trim().split('\n').pop()!)).toMatchObject({ success: false, error: { code: 'FILE_TOO_LARGE' } });
  });
});

describe('unknown flags', () => {
  test('serve refuses a misspelt flag with the accepted ones (exit 2) instead of starting without it', async () => {
    const r = await cli('serve', ['--port', '0', '--prot', '9000'], { TIREWEAR_DATA_DIR: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown flag --prot/);
    expect(r.stderr).toMatch(/--data-dir, --port, --host/);
    expect(r.stderr).toMatch(/--help/);
  });

  test('collect: a --server that is not an http(s) URL is a usage mistake (exit 2)', async () => {
    for (const server of ['localhost 8787', 'localhost:8787', 'ftp://127.0.0.1']) {
      const r = await cli('collect', [path.join(dir, 'out'), '--server', server], { TIREWEAR_API_KEY: `tw_${'a'.repeat(32)}` });
      expect(r.code, server).toBe(2);
      expect(r.stderr).toMatch(/--server must be a URL such as http:\/\/127\.0\.0\.1:8787/);
      expect(r.stderr).toMatch(/usage: TIREWEAR_API_KEY/);
    }
  });
});
