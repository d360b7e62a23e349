/**
 * A scan's files must survive a power cut once the database has committed the scan: the file is
 * flushed before its rename, and the folder (and any folder created for it) after. The file
 * system calls are observed, in order, through a pass-through mock of node:fs/promises.
 */
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { createFileImageStore } from '../../src/core/storage/files.js';
import { tempDir } from '../support/store.js';

const calls: string[] = [];
/** When set, flushing a folder fails with this code (what some network mounts answer). */
let folderSyncError: string | null = null;

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    async open(file: string, flags?: string, mode?: number) {
      const handle = await real.open(file, flags, mode);
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        if (flags === 'r' && folderSyncError) throw Object.assign(new Error(`${folderSyncError}: sync`), { code: folderSyncError });
        await sync();
        calls.push(`sync ${flags === 'r' ? 'folder' : 'file'} ${file}`);
      };
      return handle;
    },
    async rename(from: string, to: string) {
      await real.rename(from, to);
      calls.push(`rename ${to}`);
    },
  };
});

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
  calls.length = 0;
  folderSyncError = null;
});

it.skipIf(process.platform === 'win32')('flushes the file, renames it, then flushes its folder and every folder it created', async () => {
  const temp = await tempDir('tirewear-durable-');
  cleanup = temp.cleanup;
  const root = path.join(temp.dir, 'images');
  const images = createFileImageStore(root);

  await images.put('scans/ab/abc.jpg', Buffer.from('one'));
  const target = path.join(root, 'scans', 'ab', 'abc.jpg');
  expect(calls.map((c) => c.replace(/\/\.abc\.jpg\.[0-9a-f]{12}\.tmp$/, '/<temp>'))).toEqual([
    `sync folder ${path.join(root, 'scans')}`,
    `sync folder ${root}`,
    `sync folder ${temp.dir}`,
    `sync file ${path.join(root, 'scans', 'ab')}/<temp>`,
    `rename ${target}`,
    `sync folder ${path.join(root, 'scans', 'ab')}`,
  ]);

  // Into a folder that exists: the file, then only its folder.
  calls.length = 0;
  await images.put('scans/ab/abd.jpg', Buffer.from('two'));
  expect(calls.filter((c) => c.startsWith('sync folder'))).toEqual([`sync folder ${path.join(root, 'scans', 'ab')}`]);
  expect(calls.at(-2)).toBe(`rename ${path.join(root, 'scans', 'ab', 'abd.jpg')}`);
  expect((await images.get('scans/ab/abd.jpg')).toString()).toBe('two');
});

it.skipIf(process.platform === 'win32')('a file system that cannot flush a folder still stores the image; a failing disk is STORAGE_UNAVAILABLE', async () => {
  const temp = await tempDir('tirewear-durable-');
  cleanup = temp.cleanup;
  const images = createFileImageStore(path.join(temp.dir, 'images'));

  folderSyncError = 'EINVAL';
  await images.put('scans/ab/abc.jpg', Buffer.from('one'));
  expect((await images.get('scans/ab/abc.jpg')).toString()).toBe('one');

  folderSyncError = 'EIO';
  await expect(images.put('scans/ab/abd.jpg', Buffer.from('two'))).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
});
