/**
 * The afterPack hook that puts the Visual C++ runtime next to onnxruntime in a Windows package
 * (build/vc-runtime.cjs). Windows itself is not here: a packed folder is laid out as
 * electron-builder leaves it and the hook is called as electron-builder calls it.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const afterPack = require('../../build/vc-runtime.cjs') as ((
  context: { electronPlatformName: string; appOutDir: string },
  env?: Record<string, string>,
) => Promise<void>) & {
  VC_RUNTIME_DLLS: string[];
};

let tmp: string;
let appOutDir: string;
let ortDir: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'tirewear-vc-'));
  appOutDir = path.join(tmp, 'win-unpacked');
  ortDir = path.join(appOutDir, 'resources', 'app.asar.unpacked', 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6', 'win32', 'x64');
  await mkdir(ortDir, { recursive: true });
  await writeFile(path.join(ortDir, 'onnxruntime_binding.node'), 'binding');
  await writeFile(path.join(ortDir, 'onnxruntime.dll'), 'runtime');
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

/** A folder with the DLLs as Visual Studio names them (upper case). */
async function redist(dir: string, leaveOut: string[] = []): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const dll of afterPack.VC_RUNTIME_DLLS) if (!leaveOut.includes(dll)) await writeFile(path.join(dir, dll.toUpperCase()), dll);
  return dir;
}

describe('Visual C++ runtime in the Windows package', () => {
  it('copies the five DLLs onnxruntime imports next to it, from TIREWEAR_VC_REDIST_DIR', async () => {
    const source = await redist(path.join(tmp, 'crt'));
    await afterPack({ electronPlatformName: 'win32', appOutDir }, { TIREWEAR_VC_REDIST_DIR: source });
    expect((await readdir(ortDir)).sort()).toEqual(['onnxruntime.dll', 'onnxruntime_binding.node', ...afterPack.VC_RUNTIME_DLLS].sort());
  });

  it("finds Visual Studio 2022's newest redistributable folder under Program Files", async () => {
    const msvc = path.join(tmp, 'pf', 'Microsoft Visual Studio', '2022', 'Enterprise', 'VC', 'Redist', 'MSVC');
    await redist(path.join(msvc, '14.38.33135', 'x64', 'Microsoft.VC143.CRT'), ['msvcp140_atomic_wait.dll']); // older, incomplete
    await redist(path.join(msvc, '14.40.33807', 'x64', 'Microsoft.VC143.CRT'));
    await afterPack({ electronPlatformName: 'win32', appOutDir }, { ProgramFiles: path.join(tmp, 'pf') });
    expect(await readdir(ortDir)).toContain('msvcp140_atomic_wait.dll');
  });

  it('fails a Windows build without them, naming what is missing and TIREWEAR_VC_REDIST_DIR', async () => {
    const partial = await redist(path.join(tmp, 'partial'), ['vcruntime140_1.dll']);
    await expect(afterPack({ electronPlatformName: 'win32', appOutDir }, { TIREWEAR_VC_REDIST_DIR: partial })).rejects.toThrow(
      /vcruntime140_1\.dll.*not found.*TIREWEAR_VC_REDIST_DIR/s,
    );
    await expect(afterPack({ electronPlatformName: 'win32', appOutDir }, {})).rejects.toThrow(/TIREWEAR_VC_REDIST_DIR/);
  });

  it('fails when onnxruntime is not unpacked, and does nothing for macOS or Linux', async () => {
    const source = await redist(path.join(tmp, 'crt'));
    await rm(path.join(appOutDir, 'resources'), { recursive: true });
    await expect(afterPack({ electronPlatformName: 'win32', appOutDir }, { TIREWEAR_VC_REDIST_DIR: source })).rejects.toThrow(/asarUnpack/);
    await afterPack({ electronPlatformName: 'linux', appOutDir }, {});
    await afterPack({ electronPlatformName: 'darwin', appOutDir }, {});
  });
});
