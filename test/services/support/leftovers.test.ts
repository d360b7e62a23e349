/**
 * The crash-leftover sweep: orphan images and temp files past the safety age go, everything a
 * live scan refers to and everything younger stays (a deleted scan's photos go too), in any number of batches;
 * and a server start runs it in the background and logs what it removed.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../support/config.js';
import { ManualClock } from '../../../src/core/clock.js';
import { createLogger } from '../../../src/core/logger.js';
import { LEFTOVER_MIN_AGE_MS, MAX_ORPHAN_IMAGES, sweepLeftovers } from '../../../src/core/services/support/leftovers.js';
import { imageKeys } from '../../../src/core/services/support/image-keys.js';
import { startServer } from '../../../src/core/server.js';
import { createFileImageStore } from '../../../src/core/storage/files.js';
import type { Store } from '../../../src/core/storage/store.js';
import { FakeAnalyzer } from '../../support/fake-analyzer.js';
import { makeTestLicenseKeys } from '../../support/licenses.js';
import { makeScan, randomId, tempDir, tempSqliteStore } from '../../support/store.js';

const NOW = new Date();
const OLD = new Date(NOW.getTime() - LEFTOVER_MIN_AGE_MS - 60_000);
const YOUNG = new Date(NOW.getTime() - LEFTOVER_MIN_AGE_MS + 60_000);

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

let dataDir: string;
let imagesDir: string;
let store: Store;
let cleanup: Array<() => Promise<void>> = [];

beforeEach(async () => {
  const temp = await tempDir('tirewear-leftovers-');
  // a shop's database, made well before any photo these tests plant
  const db = await tempSqliteStore(new ManualClock(new Date(NOW.getTime() - 30 * 86_400_000)));
  dataDir = temp.dir;
  imagesDir = path.join(dataDir, 'images');
  store = db.store;
  cleanup = [db.cleanup, temp.cleanup];
});
afterEach(async () => {
  for (const step of cleanup) await step();
});

/** Writes `key` under the images dir with the given age; returns its path. */
async function plant(key: string, at: Date, bytes = 10): Promise<string> {
  const file = path.join(imagesDir, ...key.split('/'));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, Buffer.alloc(bytes, 1));
  await utimes(file, at, at);
  return file;
}

/** A committed scan with both files on disk; returns the two keys. */
async function storedScan(at: Date, options: { deleted?: boolean } = {}): Promise<string[]> {
  const id = randomId();
  const scan = makeScan({ id, image: { ...makeScan().image, ...imageKeys(id, 'jpg') } });
  await store.scans.commit({ scan, reservation: null, idempotency: null });
  if (options.deleted) await store.scans.markDeleted(id, NOW);
  const keys = [scan.image.originalKey, scan.image.thumbnailKey];
  for (const key of keys) await plant(key, at);
  return keys;
}

const orphanKeys = () => Object.values(imageKeys(randomId(), 'png'));
const present = (key: string) => existsSync(path.join(imagesDir, ...key.split('/')));

describe('sweepLeftovers', () => {
  it('removes exactly the orphans and temp files past the safety age, and logs count and bytes', async () => {
    const referenced = [...(await storedScan(OLD)), ...(await storedScan(YOUNG))];
    // a deleted scan whose photos a failed removal left behind: the tombstone refers to no file
    const leftByDeletion = await storedScan(OLD, { deleted: true });
    const oldOrphans = orphanKeys();
    const youngOrphans = orphanKeys();
    for (const key of oldOrphans) await plant(key, OLD, 100);
    for (const key of youngOrphans) await plant(key, YOUNG);
    const oldTemp = `scans/ab/.${randomId()}.jpg.0123456789ab.tmp`;
    const youngTemp = `scans/ab/.${randomId()}.jpg.ba9876543210.tmp`;
    await plant(oldTemp, OLD, 7);
    await plant(youngTemp, YOUNG);
    const foreign = ['notes.txt', 'scans/ab/README', 'scans/zz/abcdef.jpg'];
    for (const key of foreign) await plant(key, OLD);
    const settingsTemp = path.join(dataDir, 'settings.json.0123456789ab.tmp');
    await writeFile(path.join(dataDir, 'settings.json'), '{}');
    await writeFile(settingsTemp, '{"port":');
    await utimes(settingsTemp, OLD, OLD);
    await utimes(path.join(dataDir, 'settings.json'), OLD, OLD);

    const { lines, logger } = capture();
    const report = await sweepLeftovers({ store, imagesDir, dataDir, logger }, { now: NOW });

    expect(report).toEqual({ orphanImages: 4, keptImages: 0, tempFiles: 2, bytes: 200 + 20 + 7 + 8, failed: 0 });
    for (const key of [...oldOrphans, ...leftByDeletion]) expect(present(key)).toBe(false);
    expect(present(oldTemp)).toBe(false);
    expect(existsSync(settingsTemp)).toBe(false);
    for (const key of [...referenced, ...youngOrphans, youngTemp, ...foreign]) expect(present(key)).toBe(true);
    expect(existsSync(path.join(dataDir, 'settings.json'))).toBe(true);
    expect(lines).toContainEqual(expect.objectContaining({ level: 30, files: 6, orphanImages: 4, tempFiles: 2, bytes: 235 }));
  });

  it('works through more files than one store lookup takes, never touching a referenced one', async () => {
    const referenced: string[] = [];
    const orphans: string[] = [];
    for (let i = 0; i < 160; i++) referenced.push(...(await storedScan(OLD)));
    for (let i = 0; i < MAX_ORPHAN_IMAGES / 2; i++) orphans.push(...orphanKeys());
    for (const key of orphans) await plant(key, OLD);
    let lookups = 0;
    const counting = {
      createdAt: () => store.createdAt(),
      scans: { ...store.scans, imageKeysOf: (ids: readonly string[]) => (lookups++, store.scans.imageKeysOf(ids)) },
    };

    const report = await sweepLeftovers({ store: counting, imagesDir, dataDir, logger: capture().logger }, { now: NOW });

    expect(report.orphanImages).toBe(orphans.length);
    expect(lookups).toBeGreaterThan(1);
    expect(orphans.filter(present)).toEqual([]);
    expect(referenced.filter((key) => !present(key))).toEqual([]);
  });

  it('keeps a file rewritten by another instance between the lookup and the removal', async () => {
    const [key] = orphanKeys();
    await plant(key!, OLD);
    const images = createFileImageStore(imagesDir);
    // A retried sync push on another instance writes the same key while this sweep asks the store.
    const racing = {
      createdAt: () => store.createdAt(),
      scans: {
        ...store.scans,
        imageKeysOf: async (ids: readonly string[]) => {
          await images.put(key!, Buffer.from('the retried upload'));
          return store.scans.imageKeysOf(ids);
        },
      },
    };

    const report = await sweepLeftovers({ store: racing, imagesDir, dataDir, logger: capture().logger }, { now: NOW });

    expect(report.orphanImages).toBe(0);
    expect(await readFile(path.join(imagesDir, ...key!.split('/')), 'utf8')).toBe('the retried upload');
  });

  it('is a no-op on a data dir that has no images yet', async () => {
    const report = await sweepLeftovers({ store, imagesDir, dataDir: path.join(dataDir, 'missing'), logger: capture().logger }, { now: NOW });
    expect(report).toEqual({ orphanImages: 0, keptImages: 0, tempFiles: 0, bytes: 0, failed: 0 });
  });

  it('keeps every photo when the database has never held a scan (deleted or replaced), saying so', async () => {
    const photos = [...orphanKeys(), ...orphanKeys()];
    for (const key of photos) await plant(key, OLD);
    const oldTemp = `scans/ab/.${randomId()}.jpg.0123456789ab.tmp`;
    await plant(oldTemp, OLD);
    const { lines, logger } = capture();

    const report = await sweepLeftovers({ store, imagesDir, dataDir, logger }, { now: NOW });

    expect(report).toEqual({ orphanImages: 0, keptImages: 4, tempFiles: 1, bytes: 10, failed: 0 });
    expect(photos.filter(present)).toEqual(photos);
    expect(present(oldTemp)).toBe(false);
    const warning = lines.find((line) => line.level === 40);
    expect(warning).toMatchObject({ orphanImages: 4, imagesDir });
    expect(String(warning!.msg)).toMatch(/kept, not removed.*holds no scans at all.*tirewear\.db.*own database back/);
  });

  it('keeps photos older than the database even once scans were made on it (the old tirewear.db was deleted)', async () => {
    const photos: string[] = [];
    for (let i = 0; i < 40; i++) photos.push(...orphanKeys());
    for (const key of photos) await plant(key, new Date(NOW.getTime() - 60 * 86_400_000));
    const created = await tempSqliteStore(new ManualClock(new Date(NOW.getTime() - 2 * 86_400_000)));
    cleanup.push(created.cleanup);
    // a crash leftover of the new database, and a scan made on it since
    const leftover = orphanKeys();
    for (const key of leftover) await plant(key, OLD);
    const scan = makeScan();
    await created.store.scans.commit({ scan, reservation: null, idempotency: null });
    const { lines, logger } = capture();

    const report = await sweepLeftovers({ store: created.store, imagesDir, dataDir, logger }, { now: NOW });

    expect(report).toMatchObject({ orphanImages: 2, keptImages: 80 });
    expect(photos.filter(present)).toEqual(photos);
    expect(leftover.filter(present)).toEqual([]);
    expect(String(lines.find((line) => line.level === 40)!.msg)).toMatch(/80 photo file\(s\).*older than the database.*kept, not removed/);
  });

  it('keeps the photos when more are orphaned than a crash leaves (a database restored from an older copy)', async () => {
    const referenced = await storedScan(OLD);
    const photos: string[] = [];
    for (let i = 0; i <= MAX_ORPHAN_IMAGES / 2; i++) photos.push(...orphanKeys());
    for (const key of photos) await plant(key, OLD);
    const { lines, logger } = capture();

    const report = await sweepLeftovers({ store, imagesDir, dataDir, logger }, { now: NOW });

    expect(report).toMatchObject({ orphanImages: 0, keptImages: photos.length });
    expect(photos.length).toBeGreaterThan(MAX_ORPHAN_IMAGES);
    expect([...referenced, ...photos].filter(present)).toHaveLength(referenced.length + photos.length);
    expect(String(lines.find((line) => line.level === 40)!.msg)).toMatch(/restored from an older copy/);
    // a store with scans and a crash's worth of orphans is swept as before (the first test)
  });
});

it('a server start sweeps in the background after listen and logs what it removed', async () => {
  await storedScan(OLD);
  const orphans = orphanKeys();
  for (const key of orphans) await plant(key, OLD, 50);
  const { lines, logger } = capture();
  const server = await startServer(
    testConfig(dataDir, makeTestLicenseKeys().publicKeyPem, { imagesDir, port: 0 }),
    { analyzer: new FakeAnalyzer(), logger, store },
    { logger: false },
  );
  try {
    expect(await server.leftoverSweep).toMatchObject({ orphanImages: 2, bytes: 100 });
    expect(orphans.filter(present)).toEqual([]);
    expect(lines.some((line) => line.files === 2 && /crash leftover/.test(String(line.msg)))).toBe(true);
  } finally {
    await server.close();
  }
});

it('a server started on a new database next to an old images folder keeps every photo (the shop deleted tirewear.db)', async () => {
  const photos = [...orphanKeys(), ...orphanKeys(), ...orphanKeys()];
  for (const key of photos) await plant(key, OLD, 50);
  const { lines, logger } = capture();
  const server = await startServer(
    testConfig(dataDir, makeTestLicenseKeys().publicKeyPem, { imagesDir, port: 0 }),
    { analyzer: new FakeAnalyzer(), logger },
    { logger: false },
  );
  try {
    expect(await server.leftoverSweep).toMatchObject({ orphanImages: 0, keptImages: 6 });
    expect(photos.filter(present)).toEqual(photos);
    expect(lines.some((line) => line.level === 40 && /older than the database/.test(String(line.msg)))).toBe(true);
  } finally {
    await server.close();
  }
});
