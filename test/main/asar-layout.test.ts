/**
 * build/asar-layout.mjs, the header check build/check-package.mjs runs on the packed app.asar,
 * on small archives made here: it must name native code packed inside the asar or missing from
 * app.asar.unpacked, and the renderer or license key missing from inside the asar.
 */
import { createPackageWithOptions } from '@electron/asar';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NATIVE_FILE, checkAsarLayout } from '../../build/asar-layout.mjs';

let work: string;

beforeEach(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'tirewear-asar-layout-'));
});

afterEach(() => {
  rmSync(work, { recursive: true, force: true });
});

const APP_FILES = {
  'out/main/index.js': 'main',
  'out/renderer/index.html': '<div id="root"></div>',
  'resources/license-public.pem': '-----BEGIN PUBLIC KEY-----',
  'node_modules/native-a/build/Release/a.node': 'binary a',
  'node_modules/native-b/lib/libb.so.8.18.7': 'binary b',
};

/** Packs `files` into work/app.asar, unpacking what matches `unpack` (asar's own option). */
async function pack(files: Record<string, string>, unpack?: string): Promise<string> {
  const src = path.join(work, 'src');
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    writeFileSync(path.join(src, file), content);
  }
  const dest = path.join(work, 'app.asar');
  await createPackageWithOptions(src, dest, unpack === undefined ? {} : { unpack });
  return dest;
}

describe('checkAsarLayout', () => {
  it('passes when native code is unpacked and the renderer and license key are packed', async () => {
    const archive = await pack(APP_FILES, '{*.node,*.so.*}');
    const { problems, natives } = checkAsarLayout(archive);
    expect(problems).toEqual([]);
    expect(natives.map((n) => n.file).sort()).toEqual(['node_modules/native-a/build/Release/a.node', 'node_modules/native-b/lib/libb.so.8.18.7']);
  });

  it('names each native file packed inside the asar', async () => {
    const archive = await pack(APP_FILES, '*.node');
    expect(checkAsarLayout(archive).problems).toEqual([
      'node_modules/native-b/lib/libb.so.8.18.7: native code packed inside app.asar (not matched by asarUnpack)',
    ]);
  });

  it('names a native file marked unpacked that is missing from app.asar.unpacked', async () => {
    const archive = await pack(APP_FILES, '{*.node,*.so.*}');
    rmSync(path.join(`${archive}.unpacked`, 'node_modules', 'native-a', 'build', 'Release', 'a.node'));
    expect(checkAsarLayout(archive).problems).toEqual(['node_modules/native-a/build/Release/a.node: marked unpacked but missing from app.asar.unpacked']);
  });

  it('requires the renderer and the license key inside the asar', async () => {
    const { 'resources/license-public.pem': _key, ...withoutKey } = APP_FILES;
    const archive = await pack(withoutKey, '{*.node,*.so.*,*.html}');
    expect(checkAsarLayout(archive).problems).toEqual([
      'out/renderer/index.html: unpacked, but the app reads it from inside app.asar',
      'resources/license-public.pem: missing from app.asar',
    ]);
  });

  it('treats *.node, *.so, *.so.*, *.dll and *.dylib as native code', () => {
    for (const name of ['a.node', 'libvips.so', 'libvips-cpp.so.8.18.7', 'libonnxruntime.so.1', 'onnxruntime.dll', 'libvips.dylib']) {
      expect(NATIVE_FILE.test(name), name).toBe(true);
    }
    for (const name of ['index.js', 'node.js', 'a.node.js', 'solo.txt', 'x.sox', 'package.json']) {
      expect(NATIVE_FILE.test(name), name).toBe(false);
    }
  });
});
