/**
 * The data-folder lock on a file system without hard links: FAT32 or exFAT on a USB stick, where
 * Windows answers a hard link with EISDIR, and some network shares (EPERM). The lock is then
 * taken by exclusive create, and works as on any other disk.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';

const links = vi.hoisted(() => ({ tried: 0 }));
vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>();
  const linkSync = () => {
    links.tried++;
    throw Object.assign(new Error('EISDIR: illegal operation on a directory, link'), { code: 'EISDIR' });
  };
  return { ...fs, default: { ...fs, linkSync }, linkSync };
});

const { DataDirInUseError, LOCK_FILE_NAME, lockDataDir } = await import('../../src/core/storage/data-lock.js');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tw-lock-fat-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('takes the folder by exclusive create, refuses a second holder, gives it back, and takes over a leftover', async () => {
  const file = path.join(dir, LOCK_FILE_NAME);
  const release = lockDataDir(dir);
  expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ pid: process.pid });
  // another live process's lock is refused
  await writeFile(file, JSON.stringify({ pid: process.ppid, host: os.hostname(), since: new Date().toISOString() }));
  expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
  release(); // not ours any more: left alone
  expect(JSON.parse(await readFile(file, 'utf8')).pid).toBe(process.ppid);
  // a crash's leftover, empty as a lock caught half-written: taken over after the short wait
  await writeFile(file, '');
  const again = lockDataDir(dir);
  expect(JSON.parse(await readFile(file, 'utf8')).pid).toBe(process.pid);
  again();
  expect(links.tried).toBeGreaterThan(0); // every lock above was made without a hard link
});
