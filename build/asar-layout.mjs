/**
 * What must be outside and what must be inside a packed app.asar, read from the archive's
 * header (no extraction). Used by build/check-package.mjs; tested in test/main/asar-layout.test.ts.
 *
 * - Native code (*.node, *.so, *.so.*, *.dll, *.dylib) must be marked unpacked in the header
 *   AND exist, at the size the header records, under app.asar.unpacked: dlopen cannot read
 *   from inside an asar, and a library unpacked on its own is still not found by the .node
 *   next to it if the other one is packed.
 * - The files the app reads through Electron's asar support must be packed: the renderer
 *   @fastify/static serves (out/renderer/index.html) and the license public key
 *   (resources/license-public.pem, read from app.getAppPath(), see src/main/desktop-config.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const asar = require('@electron/asar');

/** Native code that dlopen has to read from a real file. */
export const NATIVE_FILE = /\.(node|dll|dylib|so)$|\.so\.[^/]+$/;

/** Files the installed app reads from inside app.asar. */
export const REQUIRED_PACKED = ['out/renderer/index.html', 'resources/license-public.pem'];

/**
 * Every file in the archive's header, with whether it (or a folder above it) is marked unpacked.
 * @returns {{ file: string, unpacked: boolean, size?: number, link?: string }[]}
 */
export function listAsarEntries(asarPath) {
  const { header } = asar.getRawHeader(asarPath);
  const entries = [];
  const walk = (node, prefix, unpackedAbove) => {
    for (const [name, child] of Object.entries(node.files ?? {})) {
      const file = prefix ? `${prefix}/${name}` : name;
      const unpacked = unpackedAbove || child.unpacked === true;
      if ('files' in child) walk(child, file, unpacked);
      else entries.push({ file, unpacked, size: child.size, link: child.link });
    }
  };
  walk(header, '', false);
  return entries;
}

/**
 * Problems with app.asar's layout, one line each naming the file; empty when it is right.
 * @returns {{ problems: string[], natives: { file: string, unpacked: boolean }[] }}
 */
export function checkAsarLayout(asarPath) {
  const unpackedDir = `${asarPath}.unpacked`;
  const entries = listAsarEntries(asarPath);
  const problems = [];
  const natives = entries.filter((e) => NATIVE_FILE.test(path.posix.basename(e.file)));
  for (const native of natives) {
    if (!native.unpacked) {
      problems.push(`${native.file}: native code packed inside app.asar (not matched by asarUnpack)`);
      continue;
    }
    const onDisk = path.join(unpackedDir, ...native.file.split('/'));
    if (!existsSync(onDisk)) {
      problems.push(`${native.file}: marked unpacked but missing from app.asar.unpacked`);
    } else if (native.size !== undefined && statSync(onDisk).size !== native.size) {
      problems.push(`${native.file}: app.asar.unpacked holds ${statSync(onDisk).size} bytes, the header says ${native.size}`);
    }
  }
  for (const file of REQUIRED_PACKED) {
    const entry = entries.find((e) => e.file === file);
    if (!entry) problems.push(`${file}: missing from app.asar`);
    else if (entry.unpacked) problems.push(`${file}: unpacked, but the app reads it from inside app.asar`);
    else if (entry.link !== undefined) problems.push(`${file}: a symlink in app.asar, not the file`);
  }
  return { problems, natives };
}
