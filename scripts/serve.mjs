#!/usr/bin/env node
// `npm run serve`: starts the headless server (src/core/cli/serve.ts) under tsx.
// On Linux glibc keeps a malloc arena per thread that allocates, and libvips and
// onnxruntime run many threads: MALLOC_ARENA_MAX=2 keeps the peak RSS of a burst of
// 16 full-size photos under 400 MB (docs/PERFORMANCE.md). It only works when set
// before the process starts, hence this launcher. An explicit value is kept.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
if (process.platform === 'linux' && env.MALLOC_ARENA_MAX === undefined) env.MALLOC_ARENA_MAX = '2';

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
