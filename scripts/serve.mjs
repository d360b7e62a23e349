#!/usr/bin/env node
// `npm run serve`: starts the headless server (src/core/cli/serve.ts) under tsx.
// glibc tunables (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_) keep the server's peak RSS under
// 400 MB on Linux; they only work when set before the process starts, hence this launcher
// (scripts/malloc-env.mjs says why each one; an explicit value is kept).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { withServerMallocEnv } from './malloc-env.mjs';
import { parentGone } from './parent-watch.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = withServerMallocEnv(process.env);

const child = spawn(
  process.execPath,
  [fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url)), 'src/core/cli/serve.ts', ...process.argv.slice(2)],
  { cwd: root, env, stdio: 'inherit' },
);
// Ctrl+C reaches the whole process group, the server included; SIGTERM / SIGHUP are sent
// to this process alone (service managers, kill), so they are passed on.
// Windows: closing the console signals every process in it, the server included, so a SIGHUP
// is not passed on (Windows cannot send one, and a SIGTERM there would end the server at once,
// cutting its own orderly stop short). A signal that cannot be sent must not throw here.
const pass = (signal) => {
  if (process.platform === 'win32' && signal === 'SIGHUP') return;
  try {
    child.kill(signal);
  } catch {
    // the server has gone already, or the signal cannot be sent: nothing to pass on
  }
};
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => pass(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
// `kill <npm's pid>` (a stop script, a supervisor signalling the main process) ends npm and the
// shell it started without passing the signal on: this launcher is then orphaned, and the server
// would keep the port. Once the parent is gone, the server is stopped as by SIGTERM. Windows does
// not re-parent an orphan (its ppid stays), so there the parent is also asked whether it still runs.
const parent = process.ppid;
setInterval(() => {
  if (parentGone(parent)) pass('SIGTERM');
}, 1000).unref();
