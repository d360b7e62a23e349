/**
 * electron-builder afterPack hook (electron-builder.yml `afterPack`): on Windows, the Microsoft
 * Visual C++ runtime DLLs that onnxruntime needs are copied next to it, in app.asar.unpacked
 * (app-local deployment, which Microsoft supports for these redistributable files). Windows does
 * not include them, and without them every scan on a PC lacking the VC++ 2015-2022
 * Redistributable answered MODEL_UNAVAILABLE. Windows loads a DLL's dependencies from the folder
 * of the module Node loads first, which is how onnxruntime.dll itself is found there.
 *
 * Where the DLLs come from, first found:
 *   - TIREWEAR_VC_REDIST_DIR: a folder holding them (e.g. a copy of VS's Microsoft.VC143.CRT);
 *   - %VCToolsRedistDir%\x64\Microsoft.VC14*.CRT (a Visual Studio developer prompt);
 *   - Visual Studio 2022's redistributable folders under Program Files (GitHub's Windows runners).
 * A Windows build without them fails, naming TIREWEAR_VC_REDIST_DIR: an installer without them
 * would not analyse anything on such PCs. Other platforms: nothing to do.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** What onnxruntime.dll and onnxruntime_binding.node import beyond Windows itself (objdump -p, onnxruntime-node 1.30). */
const VC_RUNTIME_DLLS = ['msvcp140.dll', 'msvcp140_1.dll', 'msvcp140_atomic_wait.dll', 'vcruntime140.dll', 'vcruntime140_1.dll'];

/** The DLL files of `dir` by lower-case name, or null when the folder holds not all of them. */
function runtimeIn(dir) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  const byLower = new Map(names.map((name) => [name.toLowerCase(), path.join(dir, name)]));
  return VC_RUNTIME_DLLS.every((dll) => byLower.has(dll)) ? VC_RUNTIME_DLLS.map((dll) => byLower.get(dll)) : null;
}

/** Subfolders of `dir` matching `pattern`, newest version last (names sort as versions do here). */
function subfolders(dir, pattern) {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && pattern.test(entry.name))
      .map((entry) => path.join(dir, entry.name))
      .sort();
  } catch {
    return [];
  }
}

/** Folders that may hold the x64 runtime, in the order above. */
function candidateFolders(env) {
  const found = [];
  if (env.TIREWEAR_VC_REDIST_DIR) found.push(env.TIREWEAR_VC_REDIST_DIR);
  if (env.VCToolsRedistDir) found.push(...subfolders(path.join(env.VCToolsRedistDir, 'x64'), /^Microsoft\.VC14\d\.CRT$/i).reverse());
  for (const programFiles of [env.ProgramFiles, env['ProgramFiles(x86)']].filter(Boolean)) {
    for (const edition of subfolders(path.join(programFiles, 'Microsoft Visual Studio', '2022'), /./)) {
      for (const version of subfolders(path.join(edition, 'VC', 'Redist', 'MSVC'), /^\d/).reverse()) {
        found.push(...subfolders(path.join(version, 'x64'), /^Microsoft\.VC14\d\.CRT$/i).reverse());
      }
    }
  }
  return found;
}

/** Where onnxruntime's Windows binaries sit in the packed app (one CPU's, after the files filter). */
function onnxruntimeFolders(appOutDir) {
  const bin = path.join(appOutDir, 'resources', 'app.asar.unpacked', 'node_modules', 'onnxruntime-node', 'bin');
  return subfolders(bin, /^napi-v\d+$/).flatMap((napi) =>
    subfolders(path.join(napi, 'win32'), /./).filter((dir) => fs.existsSync(path.join(dir, 'onnxruntime_binding.node'))),
  );
}

async function afterPack(context, env = process.env) {
  if (context.electronPlatformName !== 'win32') return;
  const targets = onnxruntimeFolders(context.appOutDir);
  if (targets.length === 0) throw new Error('vc-runtime: onnxruntime_binding.node not found in app.asar.unpacked (check asarUnpack)');
  const tried = candidateFolders(env);
  const dlls = tried.map(runtimeIn).find((files) => files !== null);
  if (!dlls) {
    throw new Error(
      `vc-runtime: the Visual C++ 2015-2022 x64 runtime DLLs (${VC_RUNTIME_DLLS.join(', ')}) were not found` +
        (tried.length ? ` in ${tried.join('; ')}` : '') +
        '. Install Visual Studio 2022 (or its Build Tools) with the C++ workload, or set TIREWEAR_VC_REDIST_DIR to a folder holding them.',
    );
  }
  for (const target of targets) {
    for (const file of dlls) fs.copyFileSync(file, path.join(target, path.basename(file).toLowerCase()));
  }
}

module.exports = afterPack;
module.exports.default = afterPack;
module.exports.VC_RUNTIME_DLLS = VC_RUNTIME_DLLS;
