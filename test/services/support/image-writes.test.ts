/**
 * The scan service writes the upload's files while it decodes and analyses. These tests hold
 * the writes at a gate to force the interleavings that matter: a write that lands after the
 * analysis failed, a write that fails after the analysis succeeded, a commit that must wait for
 * the files, and uploads waiting for a slot.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import type { AnalyzeOutcome, AnalyzeRequest } from '../../../src/core/analysis/analyzer.js';
import type { ManualClock } from '../../../src/core/clock.js';
import { AppError } from '../../../src/core/errors.js';
import { IdempotencyKey } from '../../../src/core/services/idempotency.js';
import { scanIdOfImageKey } from '../../../src/core/services/support/image-keys.js';
import { sha256Hex } from '../../../src/core/services/support/ids.js';
import { createFileImageStore } from '../../../src/core/storage/files.js';
import type { ImageStore } from '../../../src/core/storage/images.js';
import { testCore, type TestCore } from '../../support/core.js';
import { FakeAnalyzer } from '../../support/fake-analyzer.js';
import { truncate } from '../../fixtures/images/make.js';
import { anon, command, expectAppError, freshJpeg } from '../helpers.js';

/** The real file store behind a gate, logging `put|written|failed|delete <key>` in order. */
class GatedImages implements ImageStore {
  readonly events: string[] = [];
  private real: ImageStore | null = null;
  private gate: Promise<void> | null = null;
  private failing: ((key: string) => boolean) | null = null;
  private watchers: Array<{ match: (event: string) => boolean; resolve: () => void }> = [];

  use(dir: string): void {
    this.real = createFileImageStore(dir);
  }

  /** Following puts wait until the returned function is called. */
  hold(): () => void {
    let open!: () => void;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    return () => {
      this.gate = null;
      open();
    };
  }

  /** Puts of matching keys fail the way a full disk does (after the gate). */
  failFor(match: ((key: string) => boolean) | null): void {
    this.failing = match;
  }

  /** Resolves once an event matching `prefix` (e.g. "put scans/") has been logged. */
  when(prefix: string): Promise<void> {
    if (this.events.some((e) => e.startsWith(prefix))) return Promise.resolve();
    return new Promise((resolve) => this.watchers.push({ match: (e) => e.startsWith(prefix), resolve }));
  }

  private log(event: string): void {
    this.events.push(event);
    for (const w of this.watchers.filter((w) => w.match(event))) w.resolve();
    this.watchers = this.watchers.filter((w) => !w.match(event));
  }

  async put(key: string, data: Buffer): Promise<void> {
    this.log(`put ${key}`);
    if (this.gate) await this.gate;
    if (this.failing?.(key)) {
      this.log(`failed ${key}`);
      throw new AppError('STORAGE_UNAVAILABLE', 'The image folder cannot be written or read (disk full or read-only?); try again later');
    }
    await this.real!.put(key, data);
    this.log(`written ${key}`);
  }
  get = (key: string) => this.real!.get(key);
  exists = (key: string) => this.real!.exists(key);
  async delete(key: string): Promise<void> {
    this.log(`delete ${key}`);
    await this.real!.delete(key);
  }
}

/** FakeAnalyzer that also says when analyses have finished. */
class TimedAnalyzer extends FakeAnalyzer {
  private done = 0;
  private finishedWaiters: Array<{ count: number; resolve: () => void }> = [];

  /** Resolves once `count` analyses have finished (succeeded or failed) in total. */
  finished(count: number): Promise<void> {
    if (this.done >= count) return Promise.resolve();
    return new Promise((resolve) => this.finishedWaiters.push({ count, resolve }));
  }

  override async analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome> {
    try {
      return await super.analyze(request);
    } finally {
      this.done++;
      for (const w of this.finishedWaiters.filter((w) => this.done >= w.count)) w.resolve();
      this.finishedWaiters = this.finishedWaiters.filter((w) => this.done < w.count);
    }
  }
}

let t: TestCore<ManualClock, TimedAnalyzer> | null = null;
let images: GatedImages;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

async function setUp(config: { analysisConcurrency?: number; analysisQueueLimit?: number } = {}) {
  images = new GatedImages();
  t = await testCore({ images, analyzer: new TimedAnalyzer(), config });
  images.use(t.config.imagesDir);
  return t;
}

const usage = (ip = '203.0.113.7') => t!.core.store.usage.usage(`ip:${ip}`, 'day:2026-11-21');

/** Every file under the images folder, temporary files included. */
async function filesOnDisk(): Promise<string[]> {
  const dir = t!.config.imagesDir;
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const files: string[] = [];
  for (const name of names) if ((await stat(path.join(dir, name))).isFile()) files.push(name.split(path.sep).join('/'));
  return files.sort();
}

/** A few turns of the event loop: enough for anything not waiting on a gate to move on. */
async function settleLoop(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 2));
}

function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return { promise, settled: () => done };
}

test('an analysis that fails while the files are still being written deletes them only after they land', async () => {
  const { core, analyzer } = await setUp();
  const open = images.hold();
  analyzer.fail();
  const scan = tracked(core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('pos-1') })));
  await analyzer.finished(1);
  await until(async () => (await usage()).held === 0);
  await settleLoop();

  // The analysis has failed and the hold is given back, but the answer waits for the writes.
  expect(await usage()).toEqual({ used: 0, held: 0 });
  expect(scan.settled()).toBe(false);
  expect(images.events.filter((e) => e.startsWith('delete'))).toEqual([]);

  open();
  await expectAppError(scan.promise, 'NO_TIRE_DETECTED');
  const keys = images.events.filter((e) => e.startsWith('put ')).map((e) => e.slice(4));
  expect(keys).toHaveLength(2);
  for (const key of keys) {
    expect(images.events.indexOf(`written ${key}`)).toBeGreaterThanOrEqual(0);
    expect(images.events.indexOf(`delete ${key}`)).toBeGreaterThan(images.events.indexOf(`written ${key}`));
  }
  expect(await filesOnDisk()).toEqual([]);

  // The claim was forgotten: the same key analyses afresh once the photo shows a tire.
  analyzer.succeed();
  const retry = await core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('pos-1') }));
  const files = await filesOnDisk();
  expect(files).toHaveLength(2);
  expect(files.every((f) => scanIdOfImageKey(f) === retry.body.data.scanId)).toBe(true);
  expect(await usage()).toEqual({ used: 1, held: 0 });
});

test('an upload that does not decode leaves nothing, even though its write started first', async () => {
  const { core, analyzer } = await setUp();
  const open = images.hold();
  const scan = tracked(core.services.scans.analyze(await command(anon(), { image: truncate(await freshJpeg(), 0.5) })));
  await images.when('put ');
  // The decode has failed once the hold is given back; the write is still at the gate.
  await until(async () => (await usage()).held === 0);
  expect(scan.settled()).toBe(false);
  open();
  await expectAppError(scan.promise, 'IMAGE_UNREADABLE');
  expect(analyzer.calls).toBe(0);
  expect(images.events.map((e) => e.split(' ')[0])).toEqual(['put', 'written', 'delete']);
  expect(await filesOnDisk()).toEqual([]);
  expect(await usage()).toEqual({ used: 0, held: 0 });
});

test('a write that fails after the analysis succeeded: STORAGE_UNAVAILABLE, nothing committed, charged or left', async () => {
  const { core, analyzer } = await setUp();
  const open = images.hold();
  images.failFor((key) => !key.includes('.thumb.'));
  const scan = core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('pos-2') }));
  await analyzer.finished(1);
  await settleLoop();
  open();

  const error = await expectAppError(scan, 'STORAGE_UNAVAILABLE');
  expect(error.headers['X-RateLimit-Remaining']).toBe('3');
  expect(analyzer.calls).toBe(1);
  expect(await core.store.scans.changesSince(0, 10)).toEqual([]);
  expect(await usage()).toEqual({ used: 0, held: 0 });
  // The thumbnail that did land is gone again.
  const thumbnail = images.events.find((e) => e.startsWith('written ') && e.includes('.thumb.'))!.slice(8);
  expect(images.events.indexOf(`delete ${thumbnail}`)).toBeGreaterThan(images.events.indexOf(`written ${thumbnail}`));
  expect(await filesOnDisk()).toEqual([]);

  images.failFor(null);
  const retry = await core.services.scans.analyze(await command(anon(), { idempotencyKey: IdempotencyKey.parse('pos-2') }));
  expect(retry.status).toBe(200);
  expect(await filesOnDisk()).toHaveLength(2);
});

test('the scan commits only once both files are written', async () => {
  const { core, analyzer } = await setUp();
  const commit = core.store.scans.commit.bind(core.store.scans);
  const atCommit: boolean[] = [];
  core.store.scans.commit = async (input) => {
    atCommit.push(await images.exists(input.scan.image.originalKey), await images.exists(input.scan.image.thumbnailKey));
    return commit(input);
  };
  const open = images.hold();
  const image = await freshJpeg();
  const scan = tracked(core.services.scans.analyze(await command(anon(), { image })));
  await analyzer.finished(1);
  await settleLoop();
  expect(atCommit).toEqual([]);
  expect(scan.settled()).toBe(false);

  open();
  const response = await scan.promise;
  expect(atCommit).toEqual([true, true]);
  // The upload is hashed off the main thread meanwhile; the record carries the same digest.
  expect((await core.store.scans.get(response.body.data.scanId))?.image.sha256).toBe(sha256Hex(image));
});

test('uploads waiting for an analysis slot write nothing until they get one', async () => {
  const { core, analyzer } = await setUp({ analysisConcurrency: 1, analysisQueueLimit: 1 });
  const release = analyzer.hold();
  const running = core.services.scans.analyze(await command(anon()));
  const waiting = core.services.scans.analyze(await command(anon('198.51.100.9')));
  await analyzer.started(1);
  await images.when('put ');
  // The second upload's header check runs on the thread pool, which a loaded machine delays
  // past any fixed number of loop turns: wait for its reservation rather than assume it.
  await until(async () => (await usage('198.51.100.9')).held === 1);
  await settleLoop();
  // Both are admitted (each holds its allowance unit); one runs, the other waits for the slot.
  expect(await usage()).toEqual({ used: 0, held: 1 });
  expect(await usage('198.51.100.9')).toEqual({ used: 0, held: 1 });
  const writers = () => new Set(images.events.filter((e) => e.startsWith('put ')).map((e) => scanIdOfImageKey(e.slice(4))));
  expect(writers().size).toBe(1);

  release();
  const [first, second] = await Promise.all([running, waiting]);
  expect(writers()).toEqual(new Set([first.body.data.scanId, second.body.data.scanId]));
  expect(await filesOnDisk()).toHaveLength(4);
});

test('a commit that failed on its way back but stored the scan is answered 200, charged once, files kept', async () => {
  const { core } = await setUp();
  const commit = core.store.scans.commit.bind(core.store.scans);
  core.store.scans.commit = async (input) => {
    await commit(input); // PostgreSQL applied COMMIT, then the connection dropped
    throw new AppError('STORAGE_UNAVAILABLE', 'The database is unavailable; try again shortly');
  };
  const image = await freshJpeg();
  const response = await core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('pos-lost-reply') }));
  expect(response.status).toBe(200);
  const stored = await core.store.scans.get(response.body.data.scanId);
  expect(await core.images.exists(stored!.image.originalKey)).toBe(true);
  expect(await core.images.exists(stored!.image.thumbnailKey)).toBe(true);
  expect(await usage()).toEqual({ used: 1, held: 0 });
  core.store.scans.commit = commit;
  // a retry with the key replays the stored answer, photo and all
  const retry = await core.services.scans.analyze(await command(anon(), { image, idempotencyKey: IdempotencyKey.parse('pos-lost-reply') }));
  expect(retry.body.data.scanId).toBe(response.body.data.scanId);
  expect(await usage()).toEqual({ used: 1, held: 0 });
});

test('a failed commit whose outcome cannot be read back keeps the files (the leftover sweep decides later)', async () => {
  const { core } = await setUp();
  core.store.scans.commit = async () => {
    throw new AppError('STORAGE_UNAVAILABLE', 'The database is unavailable; try again shortly');
  };
  const get = core.store.scans.get.bind(core.store.scans);
  core.store.scans.get = async () => {
    throw new AppError('STORAGE_UNAVAILABLE', 'The database is unavailable; try again shortly');
  };
  await expectAppError(core.services.scans.analyze(await command(anon())), 'STORAGE_UNAVAILABLE');
  expect(await filesOnDisk()).toHaveLength(2);
  core.store.scans.get = get;
  // a commit that surely failed (the scan is not there) still removes them
  await expectAppError(core.services.scans.analyze(await command(anon())), 'STORAGE_UNAVAILABLE');
  expect(await filesOnDisk()).toHaveLength(2);
});
