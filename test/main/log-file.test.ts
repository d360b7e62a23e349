import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareLogFile } from '../../src/main/log-file.js';

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-log-'));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

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
});
