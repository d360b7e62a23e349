#!/usr/bin/env node
// `npm run serve`: starts the headless server (src/core/cli/serve.ts) under tsx.
// On Linux glibc keeps a malloc arena per thread that allocates, and libvips and
// onnxruntime run many threads: MALLOC_ARENA_MAX=2 keeps fewer of those heaps. glibc also
// raises its mmap threshold after the first large buffer is freed, so later decode buffers
// (megabytes each) come from the heap and stay resident after the scan;
// MALLOC_MMAP_THRESHOLD_=131072 pins it, so every buffer of 128 KiB or more is returned to
// the system when freed. Together they keep the peak RSS of a burst of 16 photos under 400 MB
// (docs/PERFORMANCE.md). They only work when set before the process starts, hence
// this launcher. Explicit values are kept.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
/** glibc tunables the server starts with on Linux (docs/PERFORMANCE.md). */
const SERVER_MALLOC_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };
if (process.platform === 'linux') {
  for (const [name, value] of Object.entries(SERVER_MALLOC_ENV)) if (env[name] === undefined) env[name] = value;
}

const child = spawn(
  process.execPath,
  [fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url)), 'src/core/cli/serve.ts', ...process.argv.slice(2)],
  { cwd: root, env, stdio: 'inherit' },
);
// Ctrl+C reaches the whole process group, the server included; SIGTERM / SIGHUP are sent
// to this process alone (service managers, kill), so they are passed on.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
