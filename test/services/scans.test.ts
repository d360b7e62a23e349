import sharp from 'sharp';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { DISCLAIMER } from '../../src/core/analysis/disclaimer.js';
import { makeExifRotatedJpeg } from '../fixtures/images/make.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, anon, command, expectAppError } from './helpers.js';

let t: TestCore;
afterEach(() => t.cleanup());

describe('results', () => {
  test('carry processing time and the disclaimer; verbose extras are returned but not stored', async () => {
    t = await testCore();
    const res = await t.core.services.scans.analyze(await command(anon(), { verbose: true, vehicle: ' VW Golf ', position: 'RL' }));
    const { scanId, result } = res.body.data;
    expect(scanId).toMatch(/^[0-9a-f]{32}$/);
    expect(Number.isInteger(result.processingTimeMs)).toBe(true);
    expect(result.disclaimer).toBe(DISCLAIMER);
    expect(result.overlays).toHaveProperty('mask');
    expect(result.points?.map((p) => p.kind)).toEqual(['groove', 'twi']);

    const stored = await t.core.services.scans.get(anon('9.9.9.9'), scanId);
    expect(stored).toMatchObject({ vehicle: 'VW Golf', position: 'RL', source: 'anonymous', accountId: null });
    expect(stored.result).not.toHaveProperty('overlays');
    expect(stored.result).not.toHaveProperty('points');
    expect(stored.result.estimatedDepthMm).toBe(result.estimatedDepthMm);
  });

  test('different photos give different results; the same photo the same one', async () => {
    t = await testCore();
    const a = await command(anon());
    const b = await command(anon());
    const first = await t.core.services.scans.analyze(a);
    const again = await t.core.services.scans.analyze({ ...a, receivedAt: Date.now() });
    const other = await t.core.services.scans.analyze(b);
    expect(again.body.data.result.estimatedDepthMm).toBe(first.body.data.result.estimatedDepthMm);
    expect(other.body.data.result.estimatedDepthMm).not.toBe(first.body.data.result.estimatedDepthMm);
  });

  test.each([
    ['a 65-character vehicle', { vehicle: 'v'.repeat(65) }],
    ['an unknown position', { position: 'LEFT' as never }],
  ])('%s is a validation error and costs nothing', async (_what, fields) => {
    t = await testCore();
    await expectAppError(t.core.services.scans.analyze(await command(anon(), fields)), 'VALIDATION_ERROR');
    expect(t.analyzer.calls).toBe(0);
  });

  test('an EXIF-rotated upload is stored upright: size and thumbnail', async () => {
    t = await testCore();
    const image = await makeExifRotatedJpeg({ width: 400, height: 300 });
    const res = await t.core.services.scans.analyze(await command(anon(), { image }));
    const scan = await t.core.services.scans.get(anon(), res.body.data.scanId);
    expect(scan.image).toMatchObject({ width: 300, height: 400, mime: 'image/jpeg', bytes: image.length });
    const original = await t.core.services.scans.image(anon(), scan.id, 'original');
    expect(original.data.equals(image)).toBe(true);
    const thumb = await t.core.services.scans.image(anon(), scan.id, 'thumbnail');
    expect(thumb.mime).toBe('image/jpeg');
    expect(await sharp(thumb.data).metadata()).toMatchObject({ width: 240, height: 320 });
  });
});

describe('visibility', () => {
  test('an account scan is its account’s alone; an anonymous scan is open to whoever holds its id', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const other = await accountCaller(t.core.services);
    const mine = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    const open = (await t.core.services.scans.analyze(await command(anon()))).body.data.scanId;

    await expect(t.core.services.scans.get(owner, mine)).resolves.toMatchObject({ accountId: owner.account.id, source: 'session' });
    await expectAppError(t.core.services.scans.get(other, mine), 'FORBIDDEN');
    await expectAppError(t.core.services.scans.get(anon(), mine), 'INVALID_SESSION'); // no credentials: asked to sign in, not told it is another's
    await expectAppError(t.core.services.scans.delete(anon(), mine), 'INVALID_SESSION');
    await expectAppError(t.core.services.scans.image(other, mine, 'original'), 'FORBIDDEN');
    await expectAppError(t.core.services.scans.delete(other, mine), 'FORBIDDEN');
    await expectAppError(t.core.services.scans.setMeasurement(other, mine, 4), 'FORBIDDEN');

    await expect(t.core.services.scans.get(other, open)).resolves.toMatchObject({ accountId: null });
    await expectAppError(t.core.services.scans.get(owner, '0'.repeat(32)), 'NOT_FOUND');
    await expectAppError(t.core.services.scans.get(owner, '../../etc/passwd'), 'NOT_FOUND');
  });

  test('a deleted scan is gone, with its images', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const scanId = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    const { image } = await t.core.services.scans.get(owner, scanId);
    await t.core.services.scans.delete(owner, scanId);
    await expectAppError(t.core.services.scans.get(owner, scanId), 'NOT_FOUND');
    await expectAppError(t.core.services.scans.delete(owner, scanId), 'NOT_FOUND');
    expect(await t.core.images.exists(image.originalKey)).toBe(false);
    expect(await t.core.images.exists(image.thumbnailKey)).toBe(false);
    expect((await t.core.services.scans.list(owner, {})).items).toHaveLength(0);
  });

  test('a photo that cannot be removed (a read-only folder) does not undo the deletion, and the log says so', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const scanId = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    const remove = vi.spyOn(t.core.images, 'delete').mockRejectedValue(Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' }));
    const warn = vi.spyOn(t.core.logger, 'warn');
    await t.core.services.scans.delete(owner, scanId);
    await expectAppError(t.core.services.scans.get(owner, scanId), 'NOT_FOUND');
    expect(remove).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ scanId }), expect.stringMatching(/could not be removed; the next start retries/));
  });
});

describe('gauge readings', () => {
  test('are kept beside the estimate and can be cleared', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const scanId = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    t.clock.advance(60_000);
    const measured = await t.core.services.scans.setMeasurement(owner, scanId, 4.25);
    expect(measured).toMatchObject({ measurementMm: 4.25, measuredAt: t.clock.now() });
    expect(await t.core.services.scans.setMeasurement(owner, scanId, 0)).toMatchObject({ measurementMm: 0 });
    expect(await t.core.services.scans.setMeasurement(owner, scanId, 30)).toMatchObject({ measurementMm: 30 });
    expect(await t.core.services.scans.setMeasurement(owner, scanId, null)).toMatchObject({ measurementMm: null });
  });

  test('a cleared reading has no time either for callers; the store keeps the time of the clear for sync', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const scanId = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    await t.core.services.scans.setMeasurement(owner, scanId, 4.25);
    t.clock.advance(60_000);
    expect(await t.core.services.scans.setMeasurement(owner, scanId, null)).toMatchObject({ measurementMm: null, measuredAt: null });
    expect(await t.core.services.scans.get(owner, scanId)).toMatchObject({ measurementMm: null, measuredAt: null });
    expect((await t.core.services.scans.list(owner, {})).items[0]).toMatchObject({ measurementMm: null, measuredAt: null });
    const [header, row] = (await t.core.services.scans.exportCsv(owner, {})).split('\r\n');
    const cells = Object.fromEntries(header!.split(',').map((name, i) => [name, row!.split(',')[i]]));
    expect(cells).toMatchObject({ measurementMm: '', measuredAt: '' });
    // without a reading the estimate is the depth of record again (issue 42)
    const scan = await t.core.services.scans.get(owner, scanId);
    expect(cells).toMatchObject({ depthOfRecordMm: String(scan.result.estimatedDepthMm), isPreliminary: String(scan.result.isPreliminary) });
    // The clear must win the hub's last-writer-wins merge over the reading it removed.
    const [change] = (await t.core.store.scans.changesSince(0, 10)).slice(-1);
    expect(change!.scan).toMatchObject({ id: scanId, measurementMm: null, measuredAt: t.clock.now() });
  });

  test('a JSON value of another type is refused, never coerced', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const scanId = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    for (const value of [true, false, '', '4.2', [4.2], {}, undefined]) {
      const error = await expectAppError(t.core.services.scans.setMeasurement(owner, scanId, value as never), 'VALIDATION_ERROR');
      expect(error.message).toBe('measurementMm must be a JSON number of mm from 0 to 30 with at most 2 decimals, or null to clear the reading.');
    }
    expect(await t.core.services.scans.get(owner, scanId)).toMatchObject({ measurementMm: null, measuredAt: null });
  });

  test('out of range, over-precise or non-numeric readings are refused', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const scanId = (await t.core.services.scans.analyze(await command(owner))).body.data.scanId;
    for (const value of [-0.1, 30.01, 4.255, Number.NaN, Number.POSITIVE_INFINITY, '4' as never]) {
      await expectAppError(t.core.services.scans.setMeasurement(owner, scanId, value), 'VALIDATION_ERROR');
    }
  });
});

describe('history', () => {
  test('newest first, cursor paging, filters, and bounded page size', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const ids: string[] = [];
    for (const vehicle of ['Golf', 'Polo', 'golf estate', 'Transit']) {
      t.clock.advance(60_000);
      ids.push((await t.core.services.scans.analyze(await command(owner, { vehicle }))).body.data.scanId);
    }
    await t.core.services.scans.analyze(await command(anon()));

    const page1 = await t.core.services.scans.list(owner, { limit: 3 });
    expect(page1.items.map((s) => s.id)).toEqual([ids[3], ids[2], ids[1]]);
    const page2 = await t.core.services.scans.list(owner, { limit: 3, cursor: page1.nextCursor! });
    expect(page2).toMatchObject({ items: [{ id: ids[0] }], nextCursor: null });

    const golf = await t.core.services.scans.list(owner, { vehicle: 'GOLF' });
    expect(golf.items.map((s) => s.id)).toEqual([ids[2], ids[0]]);
    const wear = golf.items[0]!.result.wear;
    expect((await t.core.services.scans.list(owner, { wear })).items.every((s) => s.result.wear === wear)).toBe(true);

    await expectAppError(t.core.services.scans.list(owner, { limit: 101 }), 'VALIDATION_ERROR');
    await expectAppError(t.core.services.scans.list(owner, { wear: 'bald' as never }), 'VALIDATION_ERROR');
    await expectAppError(t.core.services.scans.list(owner, { from: new Date('nope') }), 'VALIDATION_ERROR');
  });
});
