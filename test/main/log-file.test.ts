import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { prepareLogFile, rotateLogWhileRunning, type LogRotation } from '../../src/main/log-file.js';

let dataDir: string;
let rotation: LogRotation | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-log-'));
});

afterEach(async () => {
  rotation?.stop();
  rotation = undefined;
  vi.restoreAllMocks();
  await rm(dataDir, { recursive: true, force: true });
});

/** The packaged app's logger: pino on a synchronous SonicBoom, as src/main/index.ts builds it. */
function fileLogger(file: string) {
  const destination = pino.destination({ dest: file, sync: true });
  return { destination, logger: pino({ level: 'info' }, destination) };
}

function linesOf(text: string): string[] {
  return text.split('\n').filter(Boolean);
}

describe('desktop log file', () => {
  it('lives in the data folder', async () => {
    expect(await prepareLogFile(dataDir)).toBe(path.join(dataDir, 'logs', 'tirewear.log'));
    expect(await readdir(path.join(dataDir, 'logs'))).toEqual([]);
  });

  it('keeps appending below the limit and starts over, keeping one old file, above it', async () => {
    const file = await prepareLogFile(dataDir, 100);
    await writeFile(file, 'x'.repeat(50));
    await prepareLogFile(dataDir, 100);
    expect(await readFile(file, 'utf8')).toHaveLength(50);

    await writeFile(file, 'y'.repeat(150));
    await prepareLogFile(dataDir, 100);
    expect((await readdir(path.join(dataDir, 'logs'))).sort()).toEqual(['tirewear.previous.log']);
    expect(await readFile(path.join(dataDir, 'logs', 'tirewear.previous.log'), 'utf8')).toHaveLength(150);
  });

  it('a rotation that fails (Windows: the log open in another program) keeps appending: the start goes on', async () => {
    const file = await prepareLogFile(dataDir, 100);
    await writeFile(file, 'z'.repeat(150));
    const held = Object.assign(new Error('EBUSY: resource busy or locked, rename'), { code: 'EBUSY' });
    expect(await prepareLogFile(dataDir, 100, () => Promise.reject(held))).toBe(file);
    expect(await readFile(file, 'utf8')).toHaveLength(150);
    expect(await readdir(path.join(dataDir, 'logs'))).toEqual(['tirewear.log']);
  });
});

describe('desktop log rotation while the app runs', () => {
  it('moves a log over the limit aside and keeps logging into a new file', async () => {
    const file = await prepareLogFile(dataDir, 1024);
    const previous = path.join(dataDir, 'logs', 'tirewear.previous.log');
    const { destination, logger } = fileLogger(file);
    rotation = rotateLogWhileRunning(file, destination, { maxBytes: 1024, intervalMs: 3_600_000 });

    for (let i = 0; i < 5; i++) logger.info({ i }, 'a short line');
    expect(await rotation.check()).toBe(false);
    expect(existsSync(previous)).toBe(false);

    for (let i = 5; i < 40; i++) logger.info({ i }, 'a line that fills the log');
    expect((await stat(file)).size).toBeGreaterThan(1024);
    expect(await rotation.check()).toBe(true);

    const old = linesOf(await readFile(previous, 'utf8'));
    expect(old).toHaveLength(40);
    expect(JSON.parse(old.at(-1)!)).toMatchObject({ i: 39 });
    expect((await stat(file)).size).toBeLessThan(1024);

    logger.info({ i: 40 }, 'after the rotation');
    const fresh = linesOf(await readFile(file, 'utf8'));
    expect(fresh).toHaveLength(1);
    expect(JSON.parse(fresh[0]!)).toMatchObject({ i: 40, msg: 'after the rotation' });
    expect(linesOf(await readFile(previous, 'utf8'))).toHaveLength(40);

    // A second rotation replaces the older previous file: never more than two files.
    for (let i = 41; i < 80; i++) logger.info({ i }, 'a line that fills the log');
    expect(await rotation.check()).toBe(true);
    expect((await readdir(path.join(dataDir, 'logs'))).sort()).toEqual(['tirewear.log', 'tirewear.previous.log']);
    expect(JSON.parse(linesOf(await readFile(previous, 'utf8'))[0]!)).toMatchObject({ i: 40 });
    destination.destroy();
  });

  it('checks on its own, on a timer that does not keep the process alive, until stopped', async () => {
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    const file = await prepareLogFile(dataDir);
    const { destination, logger } = fileLogger(file);
    rotation = rotateLogWhileRunning(file, destination, { maxBytes: 200, intervalMs: 10 });
    const timer = setIntervalSpy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);

    for (let i = 0; i < 10; i++) logger.info({ i }, 'a line');
    const previous = path.join(dataDir, 'logs', 'tirewear.previous.log');
    await vi.waitFor(() => expect(existsSync(previous)).toBe(true), { timeout: 2_000 });

    const clearIntervalSpy = vi.spyOn(globalThis, 'clearInterval');
    rotation.stop();
    expect(clearIntervalSpy).toHaveBeenCalledWith(timer);
    await rm(previous);
    for (let i = 0; i < 10; i++) logger.info({ i }, 'a line');
    expect(await rotation.check()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(previous)).toBe(false);
    destination.destroy();
  });

  it('never throws into the app when the file or the destination misbehaves', async () => {
    const file = path.join(dataDir, 'logs', 'tirewear.log');
    const broken = {
      reopen: vi.fn(() => {
        throw new Error('SonicBoom destroyed');
      }),
    };
    rotation = rotateLogWhileRunning(file, broken, { maxBytes: 10, intervalMs: 3_600_000 });
    // No logs folder at all: nothing to rotate.
    expect(await rotation.check()).toBe(false);

    await prepareLogFile(dataDir);
    await writeFile(file, 'z'.repeat(100));
    await expect(rotation.check()).resolves.toBe(false);
    expect(broken.reopen).toHaveBeenCalledTimes(1);
  });

  it('runs one rotation at a time', async () => {
    const file = await prepareLogFile(dataDir);
    await writeFile(file, 'z'.repeat(100));
    const destination = { reopen: vi.fn() };
    rotation = rotateLogWhileRunning(file, destination, { maxBytes: 10, intervalMs: 3_600_000 });
    const [first, second] = await Promise.all([rotation.check(), rotation.check()]);
    expect([first, second]).toEqual([true, true]);
    expect(destination.reopen).toHaveBeenCalledTimes(1);
  });
});
