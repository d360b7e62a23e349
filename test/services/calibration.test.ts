/**
 * The Settings screen's shop calibration as a service, on a real core with the FakeAnalyzer (its
 * depth follows the photo's brightness, so photos read differently): the loader hands out fakes
 * instead of ONNX models, the calibrated manifest is written from the shipped one for real.
 * test/http/calibration.test.ts runs the same through the API with the shipped models.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { SwappableAnalyzer } from '../../src/core/analysis/swappable.js';
import { AnalysisQueue } from '../../src/core/services/support/analysis-queue.js';
import { createCalibrationService } from '../../src/core/services/calibration.js';
import { activeCalibration, byModel } from '../../src/core/services/calibration/figures.js';
import { wearForDepth } from '../../src/core/analysis/analyzer.js';
import { makeScan } from '../support/store.js';
import { createLogger } from '../../src/core/logger.js';
import { AppError } from '../../src/core/errors.js';
import { heldoutLabels, MODELS_DIR } from '../analysis/helpers.js';
import { httpTest, imageForm, signIn, type HttpTest } from '../http/helpers.js';
import { FakeAnalyzer, FAKE_MODEL_VERSION } from '../support/fake-analyzer.js';

let t: HttpTest | null = null;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

/** Scans through the API on a pro account, each given gauge(estimate, photo file) as its reading. */
async function measuredScans(test: HttpTest, count: number, gauge: (estimateMm: number, file: string) => number | null | Promise<number | null>) {
  const { cookie } = await signIn(test.app);
  const pro = test.issueCode({ kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' });
  expect((await test.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code: pro } })).statusCode).toBe(200);
  const account = (await test.app.inject({ method: 'GET', url: '/api/v1/account', headers: { cookie } })).json().data.account.id as string;
  const ids: string[] = [];
  for (const tire of heldoutLabels().slice(0, count)) {
    const upload = imageForm(readFileSync(tire.file));
    const res = await test.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, cookie } });
    expect(res.statusCode, res.body).toBe(200);
    const { scanId, result } = res.json().data;
    ids.push(scanId);
    const reading = await gauge(result.estimatedDepthMm, tire.file);
    if (reading === null) continue;
    const put = await test.app.inject({ method: 'PUT', url: `/api/v1/scans/${scanId}/measurement`, headers: { cookie }, payload: { measurementMm: reading } });
    expect(put.statusCode, put.body).toBe(200);
  }
  return { account, cookie, ids };
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** A calibration service on the test core's store, images and served analyzer. */
function serviceOn(test: HttpTest, more: Partial<Parameters<typeof createCalibrationService>[0]> = {}) {
  return createCalibrationService({
    config: test.core.config,
    store: test.core.store,
    images: test.core.images,
    analyzer: test.core.analyzer,
    clock: test.clock,
    logger: createLogger({ level: 'silent' }),
    ...more,
  });
}

/** `made`: what each loaded fake is set to (givesFeatures); `before`: awaited before each load (the n-th, from 0). */
async function setUp(
  config: Record<string, unknown> = {},
  made: (fake: FakeAnalyzer) => void = () => undefined,
  before: (n: number) => Promise<void> = async () => undefined,
) {
  t = await httpTest({ config: { shippedModelsDir: MODELS_DIR, modelsDir: MODELS_DIR, ...config } });
  const loads: string[] = [];
  const loaded: FakeAnalyzer[] = [];
  const service = serviceOn(t, {
    loadAnalyzer: async (dir) => {
      await before(loads.length);
      loads.push(dir);
      const fake = new FakeAnalyzer();
      made(fake);
      loaded.push(fake);
      return fake;
    },
  });
  return { t, service, loads, loaded };
}

describe('shop calibration service', () => {
  it('refuses fewer than 30 gauge readings, counting only measured live scans of the account', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 31, (e) => e);
    const other = await measuredScans(t, 3, (e) => e);
    expect((await service.status(other.account)).measuredScans).toBe(3);
    const scans = await t.core.store.scans.all({ accountId: account });
    await t.core.store.scans.setMeasurement(scans[0]!.id, null, new Date());
    await t.core.store.scans.markDeleted(scans[1]!.id, new Date());
    const status = await service.status(account);
    expect(status).toMatchObject({ measuredScans: 29, minimumScans: 30, active: null, job: null, blockedBy: null, modelVersion: FAKE_MODEL_VERSION });
    // the stored estimates against the gauge: this shop's gauge agrees with every one
    expect(status.byModel).toEqual([{ modelVersion: FAKE_MODEL_VERSION, scans: 29, mae: 0, within1mm: 1, wearAccuracy: 1 }]);
    await expect(service.start(account)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/^29 scan\(s\) have a gauge reading; .* at least 30/),
    });
    expect((await service.status(account)).job).toBeNull();
  });

  it('writes nothing when the shipped models already read the gauge (cross-validation finds no gain)', async () => {
    const { t, service, loads, loaded } = await setUp();
    const { account } = await measuredScans(t, 32, (e) => e);
    const started = await service.start(account);
    expect(started.job).toMatchObject({ state: 'running', total: 32 });
    await service.idle();
    const { job, active, modelVersion } = await service.status(account);
    expect(job).toMatchObject({
      state: 'unchanged',
      message: expect.stringMatching(/On these 32 photos .* Nothing was changed/),
      fit: { tires: 32, depthApplied: false, intervalApplied: false, correction: { intercept: 0, slope: 1, intervalScale: 1 } },
      skipped: {},
    });
    expect(active).toBeNull();
    expect(modelVersion).toBe(FAKE_MODEL_VERSION);
    expect(loads).toEqual([MODELS_DIR]); // the reader only: no calibrated models loaded
    expect(loaded[0]!.closed).toBe(true);
    expect(existsSync(path.join(t.dataDir, 'calibrations'))).toBe(false);
    expect(existsSync(path.join(t.dataDir, 'settings.json'))).toBe(false);
  });

  it('says what a running job is doing: reading the photos (done of total), fitting, then writing and loading the models', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // the second load is the calibrated models' (the first, the shipped ones to read with): held until the test has seen the phase
    const { t, service } = await setUp(
      {},
      () => undefined,
      (n) => (n === 1 ? held : Promise.resolve()),
    );
    const { account } = await measuredScans(t, 40, (e) => round1(1.3 * e + 0.4));
    const started = await service.start(account);
    expect(started.job).toMatchObject({ state: 'running', phase: 'reading', done: 0, total: 40 });
    // reading 40 photos takes a while on a loaded machine (31 of 40 after vitest's default second in a CI run): the
    // writing phase is held until release(), so the poll may wait as long as it needs
    await expect
      .poll(async () => (await service.status(account)).job, { timeout: 20_000 })
      .toMatchObject({ state: 'running', phase: 'writing', done: 40, total: 40 });
    release();
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({ state: 'applied' });
  });

  it('applies a correction: folder written, settings.json names it, the served models swapped; revert undoes it and keeps the folder', async () => {
    const { t, service, loads, loaded } = await setUp();
    await writeFile(path.join(t.dataDir, 'settings.json'), JSON.stringify({ ui: { shopName: 'Elm St Tyres' } }));
    // this shop's gauge reads deeper than the models: 1.3 × estimate + 0.4
    const { account } = await measuredScans(t, 40, (e) => round1(1.3 * e + 0.4));
    await service.start(account);
    await expect(service.start(account)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(service.revert(account)).rejects.toMatchObject({ code: 'CONFLICT' });
    await service.idle();
    const status = await service.status(account);
    expect(status.job).toMatchObject({ state: 'applied', fit: { tires: 40, depthApplied: true } });
    const fit = status.job!.state === 'applied' ? status.job!.fit! : null;
    expect(fit!.correction.slope).toBeCloseTo(1.3, 1);
    expect(fit!.after.mae).toBeLessThan(fit!.before.mae);

    const shipped = JSON.parse(await readFile(path.join(MODELS_DIR, 'manifest.json'), 'utf8'));
    const [folder] = await readdir(path.join(t.dataDir, 'calibrations'));
    const dir = path.join(t.dataDir, 'calibrations', folder!);
    const written = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
    expect(written.version).toMatch(new RegExp(`^${shipped.version.replace(/\./g, '\\.')}\\+shop\\.\\d{8}T\\d{4}$`));
    expect(folder).toBe(written.version.replace('+', '_'));
    expect(written.shopCalibration).toMatchObject({ base: shipped.version, tires: 40, labelsSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(status.active).toMatchObject({ version: written.version, base: shipped.version, tires: 40 });
    // settings.json: the other keys kept, modelsDir relative to the data folder
    const settings = JSON.parse(await readFile(path.join(t.dataDir, 'settings.json'), 'utf8'));
    expect(settings).toEqual({ ui: { shopName: 'Elm St Tyres' }, modelsDir: path.join('calibrations', folder!) });
    expect(loads).toEqual([MODELS_DIR, dir]);
    expect(t.core.analyzer.current).toBe(loaded[1]);
    expect(t.analyzer.closed).toBe(true); // the models served before, closed once idle

    const back = await service.revert(account);
    expect(back.active).toBeNull();
    expect(loads).toEqual([MODELS_DIR, dir, MODELS_DIR]);
    expect(t.core.analyzer.current).toBe(loaded[2]);
    expect(loaded[1]!.closed).toBe(true);
    expect(JSON.parse(await readFile(path.join(t.dataDir, 'settings.json'), 'utf8'))).toEqual({ ui: { shopName: 'Elm St Tyres' } });
    expect(existsSync(path.join(dir, 'manifest.json'))).toBe(true); // kept: a revert loses nothing
    // nothing left to revert: no reload
    await service.revert(account);
    expect(loads).toHaveLength(3);

    // a second calibration in the same minute gets a folder of its own
    await service.start(account);
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({ state: 'applied' });
    // no two calibrations share a version, even in the same minute (the test clock stands still)
    expect((await readdir(path.join(t.dataDir, 'calibrations'))).sort()).toEqual([folder, `${folder}.2`]);
    expect(t.core.analyzer.modelVersion).toBe(FAKE_MODEL_VERSION); // the fakes' own version; the manifest's:
    const second = JSON.parse(await readFile(path.join(t.dataDir, 'calibrations', `${folder}.2`, 'manifest.json'), 'utf8'));
    expect(second.version).toBe(`${written.version}.2`);
    expect((await service.status(account)).active).toMatchObject({ version: `${written.version}.2` });
    // the record is read again only when its manifest changes (status is polled each second), and then at once
    const edited = path.join(t.dataDir, 'calibrations', `${folder}.2`, 'manifest.json');
    const { shopCalibration: _dropped, ...byHand } = second as Record<string, unknown>;
    await writeFile(edited, JSON.stringify(byHand));
    expect((await service.status(account)).active).toBeNull();
    await writeFile(edited, JSON.stringify(second));
    expect((await service.status(account)).active).toMatchObject({ version: `${written.version}.2` });
  });

  it("fits a reader of the shop's own where the models give features that hold what the estimate does not", async () => {
    const { t, service, loaded } = await setUp({}, (fake) => (fake.givesFeatures = true));
    // this shop's gauge follows the photos' contrast, which the fake's estimate (their brightness) does not carry
    const { account } = await measuredScans(t, 60, async (_e, file) => {
      const contrast = ((await sharp(file).greyscale().stats()).channels[0]?.stdev ?? 0) / 255;
      return round1(Math.min(9, Math.max(0.5, 1 + 40 * contrast)));
    });
    await service.start(account);
    await service.idle();
    const { job, active } = await service.status(account);
    expect(job).toMatchObject({ state: 'applied', fit: { tires: 60, readerApplied: true, depthApplied: false, intervalApplied: false } });
    const fit = job!.state === 'applied' ? job!.fit! : null;
    expect(fit!.after.mae).toBeLessThan(fit!.before.mae - 0.5);
    expect(fit!.reasons[0]).toMatch(/reader of the shop's own/);
    expect(fit).not.toHaveProperty('reader'); // the weights stay in the manifest, off the wire
    const [folder] = await readdir(path.join(t.dataDir, 'calibrations'));
    const written = JSON.parse(await readFile(path.join(t.dataDir, 'calibrations', folder!, 'manifest.json'), 'utf8'));
    expect(written.calibration.scene.shopReader).toMatchObject({ weights: expect.any(Array), halfWidthMm: expect.any(Number) });
    expect(written.calibration.scene.shopReader.weights).toHaveLength(3);
    expect(written.shopCalibration.reader).toMatchObject({ features: 3 });
    expect(active).toMatchObject({ tires: 60, reader: true, correction: { intercept: 0, slope: 1, intervalScale: 1 } });
    expect(loaded).toHaveLength(2); // the shipped models that read the photos, then the calibrated ones swapped in
    expect(t.core.analyzer.current).toBe(loaded[1]);
  });

  it('reads with the served models when they are the shipped ones (no second set loaded)', async () => {
    const shippedVersion = JSON.parse(readFileSync(path.join(MODELS_DIR, 'manifest.json'), 'utf8')).version as string;
    const served = new FakeAnalyzer();
    Object.defineProperty(served, 'modelVersion', { value: shippedVersion });
    t = await httpTest({ config: { shippedModelsDir: MODELS_DIR, modelsDir: MODELS_DIR } });
    t.core.analyzer.swap(served);
    const loads: string[] = [];
    const service = serviceOn(t, { loadAnalyzer: async (dir) => (loads.push(dir), new FakeAnalyzer()) });
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    const before = served.calls;
    await service.start(account);
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({ state: 'applied' });
    expect(loads).toEqual([expect.stringContaining(path.join(t.dataDir, 'calibrations'))]); // only the calibrated models
    expect(served.calls - before).toBe(30); // the 30 photos read by the served models
    expect(served.closed).toBe(true); // swapped out and closed once idle, as ever
  });

  it("reads each photo in one of the scans' analysis slots, behind the scans waiting for one", async () => {
    const { t } = await setUp();
    const queue = new AnalysisQueue(1, 1);
    const reader = new FakeAnalyzer();
    const service = serviceOn(t, { queue, loadAnalyzer: async (dir) => (dir === MODELS_DIR ? reader : new FakeAnalyzer()) });
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    let releaseScan!: () => void;
    const scan = queue.run(() => new Promise<void>((resolve) => (releaseScan = resolve)));
    await service.start(account);
    for (let i = 0; i < 2000 && queue.stats.background === 0; i++) await new Promise((r) => setTimeout(r, 5));
    // the one slot is the scan's: the job waits for it, outside the waiting room
    expect(queue.stats).toEqual({ running: 1, waiting: 0, background: 1 });
    expect((await service.status(account)).job).toMatchObject({ state: 'running', done: 0 });
    // a scan arriving now goes before the job's next photo
    let photosBeforeIt = -1;
    const next = queue.run(async () => void (photosBeforeIt = reader.calls));
    releaseScan();
    await Promise.all([scan, next]);
    await service.idle();
    expect(photosBeforeIt).toBe(0);
    expect(reader.calls).toBe(30);
    expect((await service.status(account)).job).toMatchObject({ state: 'applied' });
    expect(queue.stats).toEqual({ running: 0, waiting: 0, background: 0 });
  });

  it('keeps the last outcome across a restart (a revert clears an applied one); a damaged record is forgotten', async () => {
    const { t, service } = await setUp();
    const fake = { loadAnalyzer: async () => new FakeAnalyzer() };
    const { account } = await measuredScans(t, 32, (e) => e);
    await service.start(account);
    await service.idle();
    const unchanged = (await service.status(account)).job;
    expect(unchanged).toMatchObject({ state: 'unchanged' });
    // the next start of the server: a new service on the same store
    expect((await serviceOn(t, fake).status(account)).job).toEqual(unchanged);

    await t.core.store.meta.set('calibration.lastJob', '{"state":"applied"');
    expect((await serviceOn(t, fake).status(account)).job).toBeNull();
    await t.core.store.meta.set('calibration.lastJob', JSON.stringify({ state: 'running', startedAt: 'x', done: 1, total: 2 }));
    expect((await serviceOn(t, fake).status(account)).job).toBeNull();
  });

  it('forgets a kept applied outcome once reverted, also after a restart', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 40, (e) => round1(1.3 * e + 0.4));
    await service.start(account);
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({ state: 'applied' });
    await service.revert(account);
    expect((await service.status(account)).job).toBeNull();
    expect((await serviceOn(t, { loadAnalyzer: async () => new FakeAnalyzer() }).status(account)).job).toBeNull();
  });

  it('describes one moment: a swap while the status is being read is read again', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 3, (e) => e);
    await service.status(account); // the kept job read
    const all = t.core.store.scans.all.bind(t.core.store.scans);
    let calls = 0;
    t.core.store.scans.all = async (filter) => {
      const scans = await all(filter);
      // the first read sees the models swapped under it, as when a job applies its calibration
      if (calls++ === 0) t.core.analyzer.swap(new NextAnalyzer());
      return scans;
    };
    expect((await service.status(account)).modelVersion).toBe('next');
    expect(calls).toBe(2);
  });

  it('answers after a few reads when the models keep being swapped under it (never spins)', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 3, (e) => e);
    await service.status(account);
    const all = t.core.store.scans.all.bind(t.core.store.scans);
    let calls = 0;
    t.core.store.scans.all = async (filter) => {
      const scans = await all(filter);
      calls++;
      t.core.analyzer.swap(calls % 2 ? new NextAnalyzer() : new FakeAnalyzer()); // a swap on every read
      return scans;
    };
    const status = await service.status(account);
    expect(calls).toBe(4);
    expect(status.measuredScans).toBe(3);
  });

  it('fails, changing nothing, when the photos are gone', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    const scans = await t.core.store.scans.all({ accountId: account });
    for (const scan of scans.slice(0, 5)) await t.core.images.delete(scan.image.originalKey);
    await service.start(account);
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({
      state: 'failed',
      message: 'Only 25 of 30 photos could be read again; at least 30 are needed. Nothing was changed.',
      skipped: { PHOTO_MISSING: 5 },
    });
    expect(existsSync(path.join(t.dataDir, 'settings.json'))).toBe(false);
    expect(t.core.analyzer.modelVersion).toBe(FAKE_MODEL_VERSION);
  });

  it('fails, changing nothing, when the models do not load', async () => {
    const { t } = await setUp();
    const { account } = await measuredScans(t, 30, (e) => e);
    // the real loader, on a folder without models, then on one with a manifest the load checks refuse
    const empty = serviceOn(t, { config: { ...t.core.config, shippedModelsDir: path.join(t.dataDir, 'no-models') } });
    await expect(empty.start(account)).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/models that came with the app are missing/),
    });
    expect((await empty.status(account)).blockedBy).toMatch(/models that came with the app are missing/); // the panel disables the button
    // "shipped" models that are a shop calibration themselves: refused up front too
    await mkdir(path.join(t.dataDir, 'shop-made'));
    await writeFile(path.join(t.dataDir, 'shop-made', 'manifest.json'), JSON.stringify({ version: 'x+shop.1', shopCalibration: { base: 'x' } }));
    const twice = serviceOn(t, { config: { ...t.core.config, shippedModelsDir: path.join(t.dataDir, 'shop-made') } });
    expect((await twice.status(account)).blockedBy).toMatch(/a shop calibration already/);
    await expect(twice.start(account)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/a shop calibration already/) });
    await writeFile(path.join(t.dataDir, 'manifest.json'), '{"version": "x"}');
    const bad = serviceOn(t, { config: { ...t.core.config, shippedModelsDir: t.dataDir } });
    await bad.start(account);
    await bad.idle();
    expect((await bad.status(account)).job).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/^The calibration failed and nothing was changed: Model manifest/),
    });
    expect(t.core.analyzer.modelVersion).toBe(FAKE_MODEL_VERSION);
    expect(existsSync(path.join(t.dataDir, 'settings.json'))).toBe(false);
  });

  it('goes back to the shipped models from a settings.json folder that did not load (no calibration to show)', async () => {
    const { t, service, loads } = await setUp({ modelsDirSource: 'settings', modelsDir: '/nonexistent/models-shop' });
    await writeFile(path.join(t.dataDir, 'settings.json'), JSON.stringify({ modelsDir: '/nonexistent/models-shop', port: 9000 }));
    const { account } = await measuredScans(t, 1, (e) => e);
    expect(await service.status(account)).toMatchObject({ active: null, canRevert: true });
    const back = await service.revert(account);
    expect(back).toMatchObject({ active: null, canRevert: false });
    expect(loads).toEqual([MODELS_DIR]);
    expect(JSON.parse(await readFile(path.join(t.dataDir, 'settings.json'), 'utf8'))).toEqual({ port: 9000 });
  });

  it('fails, leaving no folder behind, when the calibrated models it wrote do not load', async () => {
    const { t } = await setUp();
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    const service = serviceOn(t, {
      loadAnalyzer: async (dir) => {
        if (dir !== MODELS_DIR) throw new AppError('MODEL_UNAVAILABLE', 'Model manifest: the disk is full.');
        return new FakeAnalyzer();
      },
    });
    await service.start(account);
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({
      state: 'failed',
      message: 'The calibration failed and nothing was changed: Model manifest: the disk is full.',
    });
    expect(await readdir(path.join(t.dataDir, 'calibrations'))).toEqual([]);
    expect(existsSync(path.join(t.dataDir, 'settings.json'))).toBe(false);
    expect(t.core.analyzer.modelVersion).toBe(FAKE_MODEL_VERSION);
  });

  it('fails, leaving no folder behind, when settings.json cannot be written after the models were', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    await mkdir(path.join(t.dataDir, 'settings.json')); // a folder where the file should be: every write fails
    await service.start(account);
    await service.idle();
    expect((await service.status(account)).job).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/^The calibration failed and nothing was changed/),
    });
    expect(await readdir(path.join(t.dataDir, 'calibrations'))).toEqual([]);
    expect(t.core.analyzer.modelVersion).toBe(FAKE_MODEL_VERSION);
  });

  it('reverts once for two clicks at once, and not after shutdown', async () => {
    const { t, service, loads } = await setUp();
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    await service.start(account);
    await service.idle();
    expect(loads).toHaveLength(2);
    const [a, b] = await Promise.all([service.revert(account), service.revert(account)]);
    expect(loads).toHaveLength(3); // the shipped models loaded once
    expect([a.active, b.active]).toEqual([null, null]);
    await service.close();
    await expect(service.revert(account)).rejects.toMatchObject({ code: 'SERVER_BUSY' });
  });

  it('keeps models set by TIREWEAR_MODELS_DIR: calibration and revert refused, and said so in the status', async () => {
    const { t, service } = await setUp({ modelsDirSource: 'env' });
    const { account } = await measuredScans(t, 30, (e) => e);
    expect(await service.status(account)).toMatchObject({ blockedBy: expect.stringMatching(/TIREWEAR_MODELS_DIR/), canRevert: false });
    await expect(service.start(account)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/npm run calibrate/) });
    await expect(service.revert(account)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('stops between two photos at shutdown, changing nothing', async () => {
    const { t, service } = await setUp();
    const { account } = await measuredScans(t, 30, (e) => round1(1.3 * e + 0.4));
    await service.start(account);
    await service.close();
    expect((await service.status(account)).job).toMatchObject({ state: 'failed', message: expect.stringMatching(/shutting down/) });
    expect(existsSync(path.join(t.dataDir, 'settings.json'))).toBe(false);
    await expect(service.start(account)).rejects.toMatchObject({ code: 'SERVER_BUSY' });
  });
});

class NextAnalyzer extends FakeAnalyzer {
  override readonly modelVersion = 'next' as typeof FAKE_MODEL_VERSION;
}

describe('how each model read the measured scans', () => {
  const scan = (modelVersion: string, estimate: number, gauge: number | null) =>
    makeScan({ measurementMm: gauge, result: { ...makeScan().result, modelVersion, estimatedDepthMm: estimate, wear: wearForDepth(estimate) } });

  it('groups by model version, most scans first, from the stored estimate against the gauge', () => {
    const rows = byModel([
      scan('a', 4.0, 4.5), // 0.5, same band
      scan('a', 6.0, 7.6), // 1.6, good vs new
      scan('a', 2.0, 2.9), // 0.9, worn both
      scan('b', 8.0, 8.0),
      scan('b', 1.0, null), // not measured: left out
    ]);
    expect(rows).toEqual([
      { modelVersion: 'a', scans: 3, mae: 1, within1mm: 2 / 3, wearAccuracy: 2 / 3 },
      { modelVersion: 'b', scans: 1, mae: 0, within1mm: 1, wearAccuracy: 1 },
    ]);
    expect(byModel([])).toEqual([]);
  });
});

describe('the calibration record the status shows', () => {
  const figures = { mae: 1, within1mm: 0.5, coverage: 0.8, wearAccuracy: 0.6 };
  const good = {
    version: 'tread-x+shop.20261124T0800',
    shopCalibration: {
      base: 'tread-x',
      created: '2026-11-24T08:00:00Z',
      tires: 40,
      correction: { intercept: 0.1, slope: 1.2, intervalScale: 1 },
      crossValidated: { before: figures, after: figures },
    },
  };

  it('shows a complete record, and none for a manifest without one or with one edited out of shape', () => {
    expect(activeCalibration(good)).toEqual({ version: good.version, ...good.shopCalibration, reader: false });
    const withReader = { ...good, shopCalibration: { ...good.shopCalibration, reader: { halfWidthMm: 1.5, lambda: 330, features: 3296 } } };
    expect(activeCalibration(withReader)).toMatchObject({ reader: true, tires: 40 });
    expect(activeCalibration(null)).toBeNull();
    expect(activeCalibration({ version: 'tread-x' })).toBeNull();
    for (const broken of [
      { ...good.shopCalibration, tires: '40' },
      { ...good.shopCalibration, correction: { intercept: 0.1, slope: 1.2 } },
      { ...good.shopCalibration, crossValidated: { before: figures } },
      { ...good.shopCalibration, crossValidated: { before: figures, after: { ...figures, mae: null } } },
      { ...good.shopCalibration, base: 7 },
      'shop',
      [],
    ]) {
      expect(activeCalibration({ ...good, shopCalibration: broken }), JSON.stringify(broken)).toBeNull();
    }
  });
});

describe('SwappableAnalyzer', () => {
  it('finishes running analyses on the old models, closes them once idle, sends new ones to the new', async () => {
    const old = new FakeAnalyzer();
    const next = new NextAnalyzer();
    const swappable = new SwappableAnalyzer(old);
    const release = old.hold();
    const image = readFileSync(heldoutLabels()[0]!.file);
    const running = swappable.analyze({ image, verbose: false });
    await old.started(1);
    swappable.swap(next);
    expect(swappable.modelVersion).toBe('next');
    expect(old.closed).toBe(false); // one analysis still inside it
    release();
    expect((await running).analysis.modelVersion).toBe(FAKE_MODEL_VERSION);
    await new Promise((resolve) => setImmediate(resolve));
    expect(old.closed).toBe(true);
  });

  it('keeps serving an analyzer swapped back in while its last analyses were still running', async () => {
    const a = new FakeAnalyzer();
    const b = new NextAnalyzer();
    const swappable = new SwappableAnalyzer(a);
    const release = a.hold();
    const image = readFileSync(heldoutLabels()[0]!.file);
    const running = swappable.analyze({ image, verbose: false });
    await a.started(1);
    swappable.swap(b);
    swappable.swap(a); // back before a's analysis ended
    release();
    await running;
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.closed).toBe(false);
    expect(b.closed).toBe(true);
    expect((await swappable.analyze({ image, verbose: false })).analysis.modelVersion).toBe(FAKE_MODEL_VERSION);
  });

  it('closes an analyzer swapped in after close() instead of serving it', async () => {
    const swappable = new SwappableAnalyzer(new FakeAnalyzer());
    await swappable.close();
    const late = new FakeAnalyzer();
    swappable.swap(late);
    await new Promise((resolve) => setImmediate(resolve));
    expect(late.closed).toBe(true);
  });

  it('closes at once an analyzer nothing runs on, and everything on close()', async () => {
    const a = new FakeAnalyzer();
    const b = new FakeAnalyzer();
    const c = new FakeAnalyzer();
    const swappable = new SwappableAnalyzer(a);
    swappable.swap(b);
    expect(a.closed).toBe(true);
    const release = b.hold();
    const running = swappable.analyze({ image: readFileSync(heldoutLabels()[0]!.file), verbose: false });
    await b.started(1);
    swappable.swap(c);
    const closing = swappable.close();
    expect(c.closed).toBe(true);
    release();
    await running;
    await closing;
    expect(b.closed).toBe(true);
  });
});
