/**
 * One server per data folder (src/core/storage/data-lock.ts): a second one is refused naming the
 * first; a lock left by a process that is gone is taken over; closing gives the folder back.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE_NAME, lockDataDir, machineId, writtenHere } from '../../src/core/storage/data-lock.js';
import { runCli } from '../support/cli.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tw-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lockFile = () => path.join(dir, LOCK_FILE_NAME);
const owner = (pid: number, host = os.hostname(), since = new Date().toISOString()) => JSON.stringify({ pid, host, since });

it('takes the folder, and gives it back on release', async () => {
  const release = lockDataDir(dir);
  expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid, host: os.hostname() });
  release();
  expect(existsSync(lockFile())).toBe(false);
});

it('refuses a folder a live process on this computer holds, naming it; takes over one whose process is gone', async () => {
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
  try {
    await writeFile(lockFile(), owner(other.pid!));
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by another TireWear on this computer \\(process ${other.pid}`));
  } finally {
    other.kill();
    await new Promise((resolve) => other.once('exit', resolve));
  }
  // the process is gone now (a crash leaves the file): taken over
  const release = lockDataDir(dir);
  expect(JSON.parse(await readFile(lockFile(), 'utf8')).pid).toBe(process.pid);
  release();
  // half-written by a crash: nobody's
  await writeFile(lockFile(), '{"pid":');
  lockDataDir(dir)();
});

it('six servers starting at once on a folder with a stale lock: exactly one takes it, the others are refused, round after round', async () => {
  const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'lock-worker.ts');
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => gone.once('exit', resolve));
  const children = Array.from({ length: 6 }, () => spawn(process.execPath, ['--import', 'tsx', worker, dir], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const lines = children.map((child) => {
    const seen: string[] = [];
    child.stdout.on('data', (chunk: Buffer) => seen.push(...String(chunk).split('\n').filter(Boolean)));
    return seen;
  });
  const until = async (test: () => boolean) => {
    while (!test()) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  try {
    await until(() => lines.every((seen) => seen.includes('ready')));
    for (let round = 0; round < 5; round++) {
      await writeFile(lockFile(), owner(gone.pid!)); // a crash's leftover: its process is gone
      for (const seen of lines) seen.length = 0;
      for (const child of children) child.stdin.write('go\n');
      await until(() => lines.every((seen) => seen.length > 0));
      const outcomes = lines.map((seen) => seen[0]).sort();
      expect(outcomes).toEqual(['held', 'refused', 'refused', 'refused', 'refused', 'refused']);
      const holder = children[lines.findIndex((seen) => seen[0] === 'held')]!;
      expect(JSON.parse(await readFile(lockFile(), 'utf8')).pid).toBe(holder.pid);
      // the holder lets go (its process stays for the next round's attempt)
      const released = new Promise((resolve) => holder.once('exit', resolve));
      holder.stdin.write('exit\n');
      await released;
      const index = children.indexOf(holder);
      children[index] = spawn(process.execPath, ['--import', 'tsx', worker, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
      lines[index] = [];
      children[index].stdout.on('data', (chunk: Buffer) => lines[index]!.push(...String(chunk).split('\n').filter(Boolean)));
      await until(() => lines[index]!.includes('ready'));
    }
    expect((await readdir(dir)).filter((name) => name !== LOCK_FILE_NAME)).toEqual([]); // no temporary files left
  } finally {
    for (const child of children) child.kill();
  }
}, 60_000);

it('a takeover mark left by a process that died inside it is removed once old; a fresh one makes a start wait, then say so', async () => {
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => gone.once('exit', resolve));
  const mark = `${lockFile()}.takeover`;
  await writeFile(lockFile(), owner(gone.pid!));
  await mkdir(mark);
  const old = new Date(Date.now() - 60_000);
  await utimes(mark, old, old);
  const release = lockDataDir(dir);
  expect(JSON.parse(await readFile(lockFile(), 'utf8')).pid).toBe(process.pid);
  expect(existsSync(mark)).toBe(false);
  release();
  await writeFile(lockFile(), owner(gone.pid!));
  await mkdir(mark);
  expect(() => lockDataDir(dir)).toThrow(
    /other TireWear processes are starting on the same data folder.*if none is starting, delete .*tirewear\.lock\.takeover/,
  );
  expect(JSON.parse(await readFile(lockFile(), 'utf8')).pid).toBe(gone.pid); // nothing taken meanwhile
}, 20_000);

it('a lock whose process id now belongs to another program is a leftover (ids come round again after a reboot)', async () => {
  const other = spawn('sleep', ['30']); // a live process that is no TireWear
  try {
    await writeFile(lockFile(), owner(other.pid!));
    const release = lockDataDir(dir);
    expect(JSON.parse(await readFile(lockFile(), 'utf8')).pid).toBe(process.pid);
    release();
  } finally {
    other.kill();
  }
  // a live node process (as npm run serve runs) holds it, and the refusal names the file to delete
  await writeFile(lockFile(), owner(process.ppid));
  expect(() => lockDataDir(dir)).toThrow(/If no other TireWear is running, delete .*tirewear\.lock/);
});

it('refuses a folder another computer holds (a shared network folder), saying how to free it', async () => {
  await writeFile(lockFile(), owner(1, 'counter-pc-2'));
  expect(() => lockDataDir(dir)).toThrow(/in use by TireWear on the computer "counter-pc-2".*delete .*tirewear\.lock/);
});

it('npm run serve on a folder another server holds stops with that message, exit 1', async () => {
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
  try {
    await writeFile(lockFile(), owner(other.pid!));
    const r = await runCli('serve', ['--port', '0', '--data-dir', dir], { timeoutMs: 20_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tirewear: could not start: The data folder .* is in use by another TireWear on this computer/m);
  } finally {
    other.kill();
  }
});

it('a running server holds its data folder and gives it back when it closes', async () => {
  const { startNode } = await import('../sync/nodes.js');
  const node = await startNode();
  try {
    expect(JSON.parse(await readFile(path.join(node.dataDir, LOCK_FILE_NAME), 'utf8')).pid).toBe(process.pid);
  } finally {
    await node.server.close();
  }
  expect(existsSync(path.join(node.dataDir, LOCK_FILE_NAME))).toBe(false);
  await rm(node.dataDir, { recursive: true, force: true });
});

it("a lock with this computer's id under another host name: taken over when it is from before this boot, refused otherwise (a clone may share the id)", async () => {
  const here = machineId();
  if (process.platform === 'linux' && existsSync('/etc/machine-id')) expect(here).toMatch(/^[\w-]{8,}$/);
  if (!here) return; // no id on this system: the host-name rule below is all there is
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => gone.once('exit', resolve));
  // renamed since (macOS does so with the network), and the computer restarted since: taken over
  const beforeBoot = new Date(Date.now() - os.uptime() * 1000 - 60_000).toISOString();
  await writeFile(lockFile(), JSON.stringify({ pid: gone.pid, host: 'Shop-MacBook-Pro-2.local', since: beforeBoot, machine: here }));
  const release = lockDataDir(dir);
  expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid, machine: here });
  release();
  // since this boot: this computer renamed, or a clone with a server running on a shared folder: refused, saying both
  await writeFile(lockFile(), JSON.stringify({ pid: gone.pid, host: 'Till-2', since: new Date().toISOString(), machine: here }));
  expect(() => lockDataDir(dir)).toThrow(/in use by TireWear on the computer "Till-2".*has this computer's id: if it is this computer under an earlier name/);
  // the same host name on another computer (its own id): refused
  await writeFile(lockFile(), JSON.stringify({ pid: gone.pid, host: os.hostname(), since: new Date().toISOString(), machine: 'another-computer-0001' }));
  expect(() => lockDataDir(dir)).toThrow(/in use by TireWear on the computer/);
  await rm(lockFile());
});

it('tells computers apart by their id when both locks have one, else by host name (case and .local aside)', () => {
  expect(writtenHere({ host: 'a', machine: 'm1' }, { host: 'A.local', machine: 'm1' })).toBe(true);
  expect(writtenHere({ host: 'a', machine: 'm1' }, { host: 'b', machine: 'm1' })).toBe('renamed');
  expect(writtenHere({ host: 'a', machine: 'm1' }, { host: 'a', machine: 'm2' })).toBe(false);
  // an older lock, or a computer whose id cannot be read
  expect(writtenHere({ host: 'Shop-Mac.local' }, { host: 'shop-mac', machine: 'm1' })).toBe(true);
  expect(writtenHere({ host: 'SHOP-PC' }, { host: 'shop-pc', machine: null })).toBe(true);
  expect(writtenHere({ host: 'shop-pc', machine: 'm1' }, { host: 'till-2', machine: null })).toBe(false);
});
