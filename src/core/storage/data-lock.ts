/**
 * One server per data folder. SQLite itself copes with two processes, but two servers on one
 * folder would each run their own housekeeping, sweep each other's uploads in flight and cross
 * their settings.json saves. The lock is a file naming its owner (process and computer); one left
 * by a process that is gone (a crash, a power cut) is taken over. Hub mode keeps only
 * settings.json in its data folder and is not locked: its instances share the database anyway.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sleepSync } from '../sleep-sync.js';

export const LOCK_FILE_NAME = 'tirewear.lock';

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

interface Owner {
  pid: number;
  host: string;
  since: string;
  /** Tells this taking of the lock from another by the same process (and a pid reused). */
  token?: string;
  /** The computer's own id (machineId), which a host name change leaves as it is. Older locks have none. */
  machine?: string;
}

let cachedMachineId: string | null | undefined;

/**
 * This computer's stable id: Linux /etc/machine-id, Windows' MachineGuid, macOS' IOPlatformUUID;
 * null when it cannot be read. A host name is not stable enough to tell computers apart: macOS
 * renames itself with the network (DHCP names, "MacBook-Pro-2.local" after a Bonjour clash), which
 * left a crashed app's lock looking like another computer's and the app refusing to start.
 */
export function machineId(): string | null {
  if (cachedMachineId !== undefined) return cachedMachineId;
  let id: string | null = null;
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim() || null;
    } catch {
      return null;
    }
  };
  try {
    if (process.platform === 'linux') {
      id = read('/etc/machine-id') ?? read('/var/lib/dbus/machine-id');
    } else if (process.platform === 'win32') {
      // the 64-bit view: a 32-bit process would read WOW6432Node, which has no MachineGuid
      const out = execFileSync('reg', ['query', 'HKLM\\SOFTWARE\\Microsoft\\Cryptography', '/v', 'MachineGuid', '/reg:64'], {
        encoding: 'utf8',
        timeout: 3000,
        windowsHide: true,
      });
      id = /MachineGuid\s+REG_SZ\s+(\S+)/i.exec(out)?.[1] ?? null;
    } else if (process.platform === 'darwin') {
      const out = execFileSync('ioreg', ['-rd1', '-c', 'IOPlatformExpertDevice'], { encoding: 'utf8', timeout: 3000 });
      id = /"IOPlatformUUID"\s*=\s*"([^"]+)"/.exec(out)?.[1] ?? null;
    }
  } catch {
    id = null;
  }
  cachedMachineId = id && /^[\w-]{8,128}$/.test(id) ? id.toLowerCase() : null;
  return cachedMachineId;
}

/** `Shop-Mac.local` and `shop-mac` are one name: case and the mDNS suffix aside. */
function plainHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/\.local\.?$/, '');
}

/**
 * Whether a lock was written on this computer: by the computer's id when both have one, else by
 * the host name, case and `.local` aside. The same id under another host name is this computer
 * renamed (macOS does so with the network) or a clone of it (a disk image without sysprep, a VM
 * from a template: they share the id): `renamed`, which lockDataDir trusts only for a lock older
 * than this computer's boot, since a clone's server may be running on a shared folder.
 */
export function writtenHere(owner: Pick<Owner, 'host' | 'machine'>, here: { host: string; machine: string | null }): boolean | 'renamed' {
  const sameHost = plainHost(owner.host) === plainHost(here.host);
  if (owner.machine && here.machine) return owner.machine !== here.machine ? false : sameHost ? true : 'renamed';
  return sameHost;
}

/** A lock written before this computer last started: no process of that time runs any more. */
function beforeThisBoot(since: string): boolean {
  const at = Date.parse(since);
  return Number.isFinite(at) && at < Date.now() - os.uptime() * 1000;
}

function readOwner(file: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<Owner>;
    return Number.isInteger(owner.pid) && typeof owner.host === 'string' ? (owner as Owner) : null;
  } catch {
    return null; // unreadable or half-written (an older version's crash while taking it): nobody's
  }
}

/**
 * The owner a lock names, read again for a moment while it names none: on a file system without
 * hard links a lock being taken is visible empty until its owner has written it.
 */
function readSettledOwner(file: string): Owner | null {
  for (let tries = 0; ; tries++) {
    const owner = readOwner(file);
    if (owner !== null || tries === 5 || !existsSync(file)) return owner;
    sleepSync(20);
  }
}

function sameOwner(a: Owner | null, b: Owner | null): boolean {
  if (a === null || b === null) return a === b;
  return a.pid === b.pid && a.host === b.host && a.since === b.since && a.token === b.token && a.machine === b.machine;
}

/**
 * The name of the program a live process id belongs to, when the system tells it (Linux /proc,
 * Windows tasklist, macOS ps); null when it cannot be told.
 */
function programOf(pid: number): string | null {
  try {
    if (process.platform === 'linux') return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || null;
    if (process.platform === 'win32') {
      const out = execFileSync('tasklist', ['/FI', `PID eq ${pid}`, '/FO', 'CSV', '/NH'], { encoding: 'utf8', timeout: 3000, windowsHide: true });
      return /^"([^"]+)"/.exec(out.trim())?.[1] ?? null;
    }
    return execFileSync('ps', ['-p', String(pid), '-o', 'comm='], { encoding: 'utf8', timeout: 3000 }).trim() || null;
  } catch {
    return null;
  }
}

/**
 * A lock whose process id now belongs to another program is a crash's (or a power cut's) leftover:
 * after a reboot ids come round again (Windows reuses them soon). A TireWear runs as node (npm run
 * serve), Electron (npm run dev) or TireWear (the installed app); a program the system cannot name
 * counts as one, so a lock is never taken from a TireWear that is running.
 */
function otherProgram(pid: number): boolean {
  const program = programOf(pid);
  return program !== null && !/node|electron|tirewear/i.test(program);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists, another user's
  }
}

/**
 * Takes the data folder's lock, or throws DataDirInUseError naming who holds it; returns the release.
 * The lock appears whole: the owner record is written to a file of this process's own and then
 * hard-linked into place, so no other process ever reads it empty. A stale lock is removed only
 * by the one process holding the takeover mark (a directory beside it: making one is atomic on
 * every file system), and only after reading, inside the mark, that it still names the stale
 * owner: a lock another process has meanwhile taken is never removed, however many start at once.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE_NAME);
  mkdirSync(dataDir, { recursive: true });
  const machine = machineId();
  const me: Owner = {
    pid: process.pid,
    host: os.hostname(),
    since: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
    ...(machine ? { machine } : {}),
  };
  const record = JSON.stringify(me);
  const temp = path.join(dataDir, `.${LOCK_FILE_NAME}.${me.token}.tmp`);
  const release = () => {
    if (sameOwner(readOwner(file), me)) rmSync(file, { force: true });
  };
  try {
    writeFileSync(temp, record);
  } catch (error) {
    // a full disk creates the file and fails the write: nothing is left for a later start to find
    rmSync(temp, { force: true });
    throw error;
  }
  try {
    const giveUp = Date.now() + TAKEOVER_WAIT_MS;
    for (;;) {
      if (place(temp, file, record)) return release;
      const seen = lockState(file);
      const owner = seen.owner;
      const here = owner ? writtenHere(owner, { host: me.host, machine }) : true;
      if (owner && (here === false || (here === 'renamed' && !beforeThisBoot(owner.since)))) {
        throw new DataDirInUseError(
          `The data folder ${dataDir} is in use by TireWear on the computer "${owner.host}" (since ${owner.since}). ` +
            `One folder serves one TireWear: give this one its own data folder. If that computer no longer runs TireWear, delete ${file}.` +
            (here === 'renamed'
              ? ` ("${owner.host}" has this computer's id: if it is this computer under an earlier name, TireWear stopped there without closing; delete the file.)`
              : ''),
        );
      }
      if (owner && owner.pid !== process.pid && alive(owner.pid) && !otherProgram(owner.pid)) {
        throw new DataDirInUseError(
          `The data folder ${dataDir} is in use by another TireWear on this computer (process ${owner.pid}, since ${owner.since}): ` +
            'close it first (a second window, or npm run serve), or give this one its own data folder (TIREWEAR_DATA_DIR or --data-dir). ' +
            `If no other TireWear is running, delete ${file}.`,
        );
      }
      // left by a process that is gone (or by this one): taken over, by one process at a time
      if (enterTakeover(file)) {
        try {
          if (sameLock(lockState(file), seen)) rmSync(file, { force: true });
          // else another process took the folder since: the next look finds it held
        } finally {
          leaveTakeover(file);
        }
      } else if (Date.now() > giveUp) {
        throw new DataDirInUseError(
          `Could not take the lock ${file}: other TireWear processes are starting on the same data folder at this moment ` +
            `(${takeoverMark(file)} stays). Start one only; if none is starting, delete ${takeoverMark(file)}.`,
        );
      } else {
        sleepSync(10);
      }
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

/** How long a start waits for another process's takeover of a stale lock (a few milliseconds' work). */
const TAKEOVER_WAIT_MS = 5000;
/** A takeover mark older than this was left by a process that died inside it: removed. */
const TAKEOVER_STALE_MS = 30_000;

const takeoverMark = (file: string) => `${file}.takeover`;

function enterTakeover(file: string): boolean {
  const mark = takeoverMark(file);
  try {
    mkdirSync(mark);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  try {
    // a process that died between making the mark and removing it (a power cut in those
    // milliseconds): after TAKEOVER_STALE_MS the mark is nobody's. Two starts removing one such
    // mark at the same instant could remove each other's new one: the one case left uncovered,
    // after a crash inside the mark.
    if (Date.now() - statSync(mark).mtimeMs > TAKEOVER_STALE_MS) rmSync(mark, { recursive: true, force: true });
  } catch {
    // gone meanwhile: the next attempt makes it
  }
  return false;
}

function leaveTakeover(file: string): void {
  rmSync(takeoverMark(file), { recursive: true, force: true });
}

interface LockState {
  owner: Owner | null;
  /** Which file it is (inode, size, time): a lock made again with the same content is another one. */
  stamp: string | null;
}

/** The lock's owner and identity; owner null for a half-written file, stamp null when there is none. */
function lockState(file: string): LockState {
  const owner = readSettledOwner(file);
  try {
    const stat = statSync(file);
    return { owner, stamp: `${stat.ino}:${stat.size}:${stat.mtimeMs}` };
  } catch {
    return { owner, stamp: null };
  }
}

function sameLock(a: LockState, b: LockState): boolean {
  return a.stamp !== null && a.stamp === b.stamp && sameOwner(a.owner, b.owner);
}

/**
 * Puts the lock in place whole; false when one is there already. A file system without hard links
 * (FAT32 and exFAT on a USB stick, where Windows answers EISDIR; some network shares) gets it by
 * exclusive create instead, visible empty for an instant (readSettledOwner waits that out).
 */
function place(temp: string, file: string, record: string): boolean {
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
  }
  try {
    const fd = openSync(file, 'wx');
    try {
      writeSync(fd, record);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}
