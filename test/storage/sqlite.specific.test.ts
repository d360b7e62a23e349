import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/core/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { openStore, SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { SchemaTooNewError, openSqliteStore, untilNotBusy } from '../../src/core/storage/sqlite/index.js';
import { MIGRATIONS } from '../../src/core/storage/sqlite/migrations/index.js';
import { migrate } from '../../src/core/storage/sqlite/migrate.js';
import { makeScan, tempDir } from '../support/store.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const WORKER = path.join(FIXTURES, 'reserve-worker.ts');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dbFile(): Promise<string> {
  const temp = await tempDir();
  cleanups.push(temp.cleanup);
  return path.join(temp.dir, 'tirewear.db');
}

/** A database file migrated up to `version` only, still open: as an older TireWear left it. */
async function databaseAtSchema(version: number): Promise<{ file: string; old: Database.Database }> {
  const file = await dbFile();
  const old = new Database(file);
  migrate(
    old,
    file,
    new ManualClock(),
    MIGRATIONS.filter((m) => m.version <= version),
  );
  return { file, old };
}

/** The store on `file`, closed after the test. */
function openForTest(options: Parameters<typeof openSqliteStore>[0]): ReturnType<typeof openSqliteStore> {
  const store = openSqliteStore(options);
  cleanups.push(() => store.close());
  return store;
}

function startWorker(file: string, subject: string, limit: number, attempts: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, file, subject, String(limit), String(attempts)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  const lines = (match: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = match.exec(output);
        if (found) resolve(found[0]);
      };
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        check();
      });
      child.once('exit', (code) => (match.test(output) ? check() : reject(new Error(`worker exited ${code}: ${output}`))));
    });
  return { child, ready: lines(/ready/), done: lines(/granted (\d+)/) };
}

function busy(code = 'SQLITE_BUSY'): Error {
  return Object.assign(new Error('database is locked'), { code });
}

describe('opening retries what SQLite refuses at once as busy', () => {
  it('tries again after SQLITE_BUSY and its extended codes, and returns the answer', () => {
    const failures = [busy(), busy('SQLITE_BUSY_RECOVERY')];
    const pauses: number[] = [];
    let calls = 0;
    const answer = untilNotBusy(
      () => {
        calls++;
        const failure = failures.shift();
        if (failure) throw failure;
        return 'wal';
      },
      1000,
      7,
      (ms) => pauses.push(ms),
    );
    expect(answer).toBe('wal');
    expect(calls).toBe(3);
    expect(pauses).toEqual([7, 7]);
  });

  it('gives up with the last busy error once the timeout has passed', () => {
    let calls = 0;
    const started = Date.now();
    expect(() =>
      untilNotBusy(
        () => {
          calls++;
          throw busy();
        },
        40,
        5,
      ),
    ).toThrow('database is locked');
    expect(calls).toBeGreaterThan(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it('does not retry any other error', () => {
    let calls = 0;
    const notADatabase = Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' });
    expect(() =>
      untilNotBusy(
        () => {
          calls++;
          throw notADatabase;
        },
        1000,
        1,
        () => undefined,
      ),
    ).toThrow(notADatabase);
    expect(calls).toBe(1);
  });
});

describe('SQLite store specifics', () => {
  it('opens in WAL with foreign keys and records every migration', async () => {
    const file = await dbFile();
    const clock = new ManualClock('2026-11-21T07:00:00Z');
    const store = openSqliteStore({ file, clock });
    await store.close();
    const db = new Database(file, { readonly: true });
    cleanups.push(async () => {
      db.close();
    });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all()).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: clock.now().getTime() })),
    );
  });

  it('keeps data across reopen and does not re-run migrations', async () => {
    const file = await dbFile();
    const scan = makeScan();
    const first = openSqliteStore({ file });
    await first.scans.commit({ scan, reservation: null, idempotency: null });
    await first.close();
    const second = openSqliteStore({ file });
    cleanups.push(() => second.close());
    expect(await second.scans.get(scan.id)).toEqual(scan);
  });

  it('a database of schema 2 with a hold in flight takes migration 3 and the hold is still charged on commit', async () => {
    const { file, old } = await databaseAtSchema(2);
    old.prepare("INSERT INTO accounts (id, email, password_hash, created_at, pack_credit) VALUES ('a1', 'a@x.example', 'h', 0, 2)").run();
    old
      .prepare("INSERT INTO reservations (id, source, subject, window, pack_account_id, created_at) VALUES ('r1', 'pack', 'acct:a1', 'month:2026-11', 'a1', 0)")
      .run();
    old.close();
    const store = openForTest({ file });
    await store.scans.commit({ scan: makeScan(), reservation: { id: 'r1', source: 'pack', subject: 'acct:a1', window: 'month:2026-11' }, idempotency: null });
    expect(await store.usage.packBalance('a1')).toEqual({ credit: 1, held: 0 });
  });

  it('a database of schema 3 takes migration 4: existing vehicles get their plate key, scans an empty history', async () => {
    const { file, old } = await databaseAtSchema(3);
    const insert = old.prepare(
      `INSERT INTO scans (id, account_id, api_key_id, source, created_at, vehicle, vehicle_folded, position, wear, result, image,
         measurement_mm, measured_at, deleted_at, change_seq) VALUES (?, 'a1', NULL, 'session', ?, ?, ?, NULL, 'good', ?, ?, NULL, NULL, NULL, ?)`,
    );
    const plain = makeScan();
    const rows: Array<[string, string | null]> = [
      ['s1', 'KA-TW-204'],
      ['s2', 'ka tw 204'],
      ['s3', null],
      ['s4', '---'],
      ['s5', 'ＫＡ－ＴＷ－２０４'],
    ];
    rows.forEach(([id, vehicle], i) =>
      insert.run(id, i, vehicle, vehicle?.toLowerCase() ?? null, JSON.stringify(plain.result), JSON.stringify(plain.image), i + 1),
    );
    old.close();
    const store = openForTest({ file });
    const raw = new Database(file, { readonly: true });
    cleanups.push(async () => void raw.close());
    expect(raw.prepare('SELECT id, vehicle_key, changes, edited_at FROM scans ORDER BY id').all()).toEqual([
      { id: 's1', vehicle_key: 'KATW204', changes: '[]', edited_at: null },
      { id: 's2', vehicle_key: 'KATW204', changes: '[]', edited_at: null },
      { id: 's3', vehicle_key: null, changes: '[]', edited_at: null },
      { id: 's4', vehicle_key: null, changes: '[]', edited_at: null },
      { id: 's5', vehicle_key: 'KATW204', changes: '[]', edited_at: null },
    ]);
    const found = await store.scans.list({ accountId: 'a1', limit: 10, vehicle: 'Ka Tw-204' });
    expect(found.items.map((s) => s.id)).toEqual(['s5', 's2', 's1']);
    expect(await store.scans.get('s1')).toMatchObject({ editedAt: null, changes: [] });
  });

  it('before upgrading a database that holds a schema, keeps a copy of it as it was and says where', async () => {
    const { file, old } = await databaseAtSchema(2);
    old.prepare("INSERT INTO accounts (id, email, password_hash, created_at, pack_credit) VALUES ('a1', 'a@x.example', 'h', 0, 7)").run();
    old.close();
    const logged: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
    const logger = {
      info: (fields: Record<string, unknown>, message: string) => void logged.push({ level: 'info', fields, message }),
      warn: (fields: Record<string, unknown>, message: string) => void logged.push({ level: 'warn', fields, message }),
    };
    const store = openForTest({ file, logger: logger as never });
    const backup = `${file}.schema-2.bak`;
    expect(logged).toEqual([
      {
        level: 'info',
        fields: { from: 2, to: MIGRATIONS.length, backup },
        message: expect.stringMatching(
          /^upgraded the database from schema 2 to \d+; the database as it was is kept in .*tirewear\.db\.schema-2\.bak .*move tirewear\.db and its -wal and -shm files aside/,
        ),
      },
    ]);
    // the copy is the old schema with its data, which the older TireWear opens as it left it
    const copy = new Database(backup, { readonly: true });
    cleanups.push(async () => {
      copy.close();
    });
    expect(copy.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: 2 });
    expect(copy.prepare('SELECT pack_credit FROM accounts WHERE id = ?').get('a1')).toEqual({ pack_credit: 7 });
    // opened again: nothing to upgrade, nothing said, the copy untouched
    await store.close();
    logged.length = 0;
    const again = openSqliteStore({ file, logger: logger as never });
    cleanups.push(() => again.close());
    expect(logged).toEqual([]);
  });

  it('a new database is not copied; a copy that cannot be made is said, and the upgrade goes ahead', async () => {
    const fresh = await dbFile();
    await openSqliteStore({ file: fresh }).close();
    expect(existsSync(`${fresh}.schema-0.bak`)).toBe(false);

    const { file, old } = await databaseAtSchema(2);
    old.close();
    await mkdir(`${file}.schema-2.bak.tmp`); // in the way: VACUUM INTO cannot write there, rm without recursive cannot remove it
    const warned: string[] = [];
    const logger = { info: () => undefined, warn: (_fields: unknown, message: string) => void warned.push(message) };
    openForTest({ file, logger: logger as never });
    expect(warned).toEqual([expect.stringMatching(/^upgraded the database from schema 2 to \d+; no copy of it as it was could be kept/)]);
    const db = new Database(file, { readonly: true });
    cleanups.push(async () => {
      db.close();
    });
    expect(db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: MIGRATIONS.length });
  });

  it('refuses a database written by a newer version, clearly', async () => {
    const file = await dbFile();
    await openSqliteStore({ file }).close();
    const db = new Database(file);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)").run();
    db.close();
    expect(() => openSqliteStore({ file })).toThrow(SchemaTooNewError);
    expect(() => openSqliteStore({ file })).toThrow(new RegExp(`schema version 999.*knows only up to ${MIGRATIONS.length}.*Update TireWear`));
  });

  it('names the file when it is not a database', async () => {
    const file = await dbFile();
    await writeFile(file, 'this is a text file, long enough to have a header of sorts...........................');
    expect(() => openSqliteStore({ file })).toThrow(/tirewear\.db is not a readable TireWear database/);
  });

  it('answers STORAGE_UNAVAILABLE when another connection holds the write lock too long', async () => {
    const file = await dbFile();
    const store = openForTest({ file, busyTimeoutMs: 30 });
    const blocker = new Database(file);
    blocker.exec('BEGIN IMMEDIATE');
    cleanups.push(async () => {
      blocker.exec('ROLLBACK');
      blocker.close();
    });
    await expect(
      store.usage.reserve({
        id: 'r',
        subject: 's',
        window: 'w',
        limit: 1,
        packAccountId: null,
        unmetered: false,
        now: new Date(0),
      }),
    ).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE', status: 503 });
  });

  it('two processes reserving on one file at once grant exactly the limit', async () => {
    const file = await dbFile();
    const workers = [startWorker(file, 'ip:10.0.0.1', 25, 40), startWorker(file, 'ip:10.0.0.1', 25, 40)];
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.child.stdin.write('go\n');
    const granted = (await Promise.all(workers.map((w) => w.done))).map((line) => Number(line.split(' ')[1]));
    expect(granted[0]! + granted[1]!).toBe(25);
    const store = openForTest({ file });
    expect(await store.usage.usage('ip:10.0.0.1', 'day:2026-11-21')).toEqual({ used: 0, held: 25 });
  }, 20_000);

  it('a committed, charged scan survives kill -9 of the process right after', async () => {
    const file = await dbFile();
    const worker = path.join(FIXTURES, 'commit-and-die-worker.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', worker, file, 'crash-scan'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
    expect(signal).toBe('SIGKILL');
    const store = openForTest({ file });
    expect((await store.scans.get('crash-scan'))?.id).toBe('crash-scan');
    expect(await store.usage.usage('ip:10.0.0.9', 'day:2026-11-21')).toEqual({ used: 1, held: 0 });
  }, 20_000);

  it('openStore creates the data dir and the database in it', async () => {
    const temp = await tempDir();
    cleanups.push(temp.cleanup);
    const dataDir = path.join(temp.dir, 'nested', 'data');
    const config = { ...defaultConfig(), dataDir, databaseUrl: null };
    const store = await openStore(config, new ManualClock());
    cleanups.push(() => store.close());
    expect(store.kind).toBe('sqlite');
    await store.meta.set('k', 'v');
    const db = new Database(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true });
    expect(db.prepare('SELECT value FROM meta').get()).toEqual({ value: 'v' });
    db.close();
  });
});

/**
 * Root may write any file, so as root the check runs as nobody; that needs runuser and a
 * checkout nobody can read (not so in a private home folder): otherwise it is skipped, saying so.
 */
function canRunAsOrdinaryUser(): boolean {
  if (process.getuid?.() !== 0) return true;
  const worker = path.join(FIXTURES, 'open-worker.ts');
  const probe = spawnSync('runuser', ['-u', 'nobody', '--', 'test', '-r', worker]);
  if (probe.status === 0) return true;
  console.warn(`skipped: the read-only database check needs runuser and a checkout the user nobody can read (${worker})`);
  return false;
}

describe('a database file the server cannot write', () => {
  it.runIf(canRunAsOrdinaryUser())('refuses to open, naming the file, instead of starting a server whose every request is 503', async () => {
    const file = await dbFile();
    void openSqliteStore({ file }).close();
    const { chmod } = await import('node:fs/promises');
    await chmod(path.dirname(file), 0o777);
    await chmod(file, 0o444);
    const asRoot = process.getuid?.() === 0;
    const args = ['--import', 'tsx', path.join(FIXTURES, 'open-worker.ts'), file];
    const child = asRoot
      ? spawn('runuser', ['-u', 'nobody', '--', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, HOME: '/tmp' } })
      : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += String(chunk)));
    await new Promise((resolve) => child.once('close', resolve));
    expect(out.trim()).toBe(
      `${file} cannot be written (the file, its folder or its -wal/-shm files are read-only, or belong to another user): TireWear needs to write its data folder`,
    );
    // and nothing was changed: the writable file still opens and holds no probe
    await chmod(file, 0o644);
    const db = new Database(file, { readonly: true });
    expect(db.prepare("SELECT COUNT(*) AS n FROM meta WHERE key = 'write_probe'").get()).toEqual({ n: 0 });
    db.close();
  });
});
