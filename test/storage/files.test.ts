import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ImageStore } from '../../src/core/storage/images.js';
import { RENAME_RETRY_DELAYS_MS, renameRetrying } from '../../src/core/storage/files.js';
import { tempImageStore } from '../support/store.js';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

async function open(): Promise<{ images: ImageStore; dir: string }> {
  const temp = await tempImageStore();
  cleanup = temp.cleanup;
  return temp;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('FileImageStore', () => {
  it('writes, reads, checks and deletes by key, in sharded folders', async () => {
    const { images, dir } = await open();
    const data = Buffer.from([0xff, 0xd8, 0xff, 1, 2, 3]);
    expect(await images.exists('scans/ab/abc.jpg')).toBe(false);
    await images.put('scans/ab/abc.jpg', data);
    expect(await images.exists('scans/ab/abc.jpg')).toBe(true);
    expect(await images.get('scans/ab/abc.jpg')).toEqual(data);
    expect(await filesUnder(dir)).toEqual([path.join('scans', 'ab', 'abc.jpg')]);
    await images.delete('scans/ab/abc.jpg');
    await images.delete('scans/ab/abc.jpg');
    expect(await images.exists('scans/ab/abc.jpg')).toBe(false);
  });

  it('answers NOT_FOUND for a missing image', async () => {
    const { images } = await open();
    await expect(images.get('scans/none.jpg')).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('replaces atomically: concurrent readers see the old or the new bytes, never a mix', async () => {
    const { images, dir } = await open();
    const a = Buffer.alloc(256 * 1024, 'a');
    const b = Buffer.alloc(256 * 1024, 'b');
    await images.put('k.bin', a);
    const writes = Array.from({ length: 10 }, (_, i) => images.put('k.bin', i % 2 ? a : b));
    const reads = Array.from({ length: 30 }, () => images.get('k.bin'));
    const [, seen] = await Promise.all([Promise.all(writes), Promise.all(reads)]);
    for (const bytes of seen) expect(bytes.equals(a) || bytes.equals(b)).toBe(true);
    expect(await filesUnder(dir)).toEqual(['k.bin']);
  });

  it.each([
    '../escape.jpg',
    'scans/../../escape.jpg',
    '/etc/passwd',
    'C:\\Windows\\x',
    'scans\\x.jpg',
    '',
    'scans//x.jpg',
    'scans/',
    '.hidden',
    'scans/./x.jpg',
    'scans/x.jpg\0',
    'scans/x y.jpg',
  ])('refuses the key %j on every operation', async (key) => {
    const { images, dir } = await open();
    await expect(images.put(key, Buffer.from('x'))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(images.get(key)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(images.exists(key)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(images.delete(key)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await filesUnder(dir)).toEqual([]);
  });
});

describe('renameRetrying', () => {
  const refusal = (code: string) => Object.assign(new Error(`${code}: rename`), { code });
  /** A rename that fails with `codes` in turn, then succeeds; counts its calls and the pauses taken. */
  function flaky(...codes: string[]) {
    const calls: Array<[string, string]> = [];
    const pauses: number[] = [];
    return {
      calls,
      pauses,
      options: (platform: NodeJS.Platform) => ({
        platform,
        rename: async (from: string, to: string) => {
          calls.push([from, to]);
          const code = codes.shift();
          if (code) throw refusal(code);
        },
        sleep: async (ms: number) => void pauses.push(ms),
      }),
    };
  }

  it('on Windows tries again while an antivirus or a backup holds the file (EPERM, EBUSY, EACCES)', async () => {
    const rename = flaky('EPERM', 'EBUSY', 'EACCES');
    await renameRetrying('a.tmp', 'a', rename.options('win32'));
    expect(rename.calls).toEqual([
      ['a.tmp', 'a'],
      ['a.tmp', 'a'],
      ['a.tmp', 'a'],
      ['a.tmp', 'a'],
    ]);
    expect(rename.pauses).toEqual(RENAME_RETRY_DELAYS_MS.slice(0, 3));
  });

  it('gives up after its pauses (≈ 3 s) with the last error', async () => {
    const rename = flaky(...Array.from({ length: RENAME_RETRY_DELAYS_MS.length + 1 }, () => 'EPERM'));
    await expect(renameRetrying('a.tmp', 'a', rename.options('win32'))).rejects.toMatchObject({ code: 'EPERM' });
    expect(rename.calls).toHaveLength(RENAME_RETRY_DELAYS_MS.length + 1);
    expect(rename.pauses.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(3000);
  });

  it('answers at once elsewhere, and on Windows for any other error', async () => {
    for (const [platform, code] of [
      ['linux', 'EPERM'],
      ['darwin', 'EBUSY'],
      ['win32', 'ENOSPC'],
      ['win32', 'ENOENT'],
    ] as const) {
      const rename = flaky(code);
      await expect(renameRetrying('a.tmp', 'a', rename.options(platform))).rejects.toMatchObject({ code });
      expect(rename.calls, `${platform} ${code}`).toHaveLength(1);
    }
  });
});
