/**
 * The hub's receiving side against the storage audit of 2026-11-24: a refused first push must
 * leave the owner's copy as it was, photo, reading and all (two first pushes of one id at once,
 * from another account or another shop of the same one), and a deletion synced from a shop
 * removes the photos on the hub as a deletion made there does.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/services/support/ids.js';
import { receiveSyncedScan } from '../../src/core/sync/receive.js';
import { isScanRefusal, toSyncScan } from '../../src/core/sync/wire.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { testCore, type TestCore } from '../support/core.js';
import { makeScan, randomId } from '../support/store.js';
import { accountCaller, command } from '../services/helpers.js';

let t: TestCore | null = null;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

async function wireFor(id: string, jpeg: Buffer, overrides: Parameters<typeof makeScan>[0] = {}) {
  const record = makeScan({ id, source: 'session', ...overrides });
  return toSyncScan({ ...record, image: { ...record.image, mime: 'image/jpeg', sha256: sha256Hex(jpeg), bytes: jpeg.length } });
}

/** Store and images of the test core, with a lookup that answers "no such scan" (it ran before another push's commit). */
function staleLookup(core: TestCore) {
  return { images: core.core.images, store: { ...core.core.store, scans: { ...core.core.store.scans, get: async () => null } } };
}

/** A new core whose hub holds one scan the owner's session pushed, with its photo. */
async function pushedScan() {
  t = await testCore();
  const deps = { store: t.core.store, images: t.core.images };
  const owner = { accountId: 'acct-owner', apiKeyId: null };
  const jpeg = await makeJpeg({ width: 320, height: 256 });
  const id = randomId();
  const stored = await receiveSyncedScan(deps, owner, await wireFor(id, jpeg), jpeg);
  return { t, deps, owner, jpeg, id, stored };
}

describe('receiving a pushed scan on the hub', () => {
  it("a first push refused because another account stored the id meanwhile leaves that account's photo as it was", async () => {
    t = await testCore();
    const deps = { store: t.core.store, images: t.core.images };
    const id = randomId();
    const [mine, theirs] = [await makeJpeg({ width: 320, height: 256 }), await makeJpeg({ width: 400, height: 300 })];
    const stored = await receiveSyncedScan(deps, { accountId: 'acct-owner', apiKeyId: null }, await wireFor(id, mine), mine);
    const photo = await t.core.images.get(stored.image.originalKey);
    // the other push looked the id up before the owner's commit (two first pushes at once)
    const stale = staleLookup(t);
    const hostile = await wireFor(id, theirs, { measurementMm: 9.9, measuredAt: new Date(Date.UTC(2026, 10, 24, 13)) });
    await expect(receiveSyncedScan(stale, { accountId: 'acct-other', apiKeyId: null }, hostile, theirs)).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await t.core.images.get(stored.image.originalKey)).toEqual(photo);
    expect(await t.core.store.scans.get(id)).toEqual(stored); // the reading not merged either
    // and the refused push's own files are gone: only the owner's two remain in the id's folder
    const folder = path.join(t.core.config.imagesDir, 'scans', id.slice(0, 2));
    expect((await readdir(folder)).sort()).toEqual([path.basename(stored.image.originalKey), path.basename(stored.image.thumbnailKey)].sort());
  });

  it('a deletion synced from the shop removes the photos on the hub; the record stays as a tombstone', async () => {
    const { t, deps, owner, jpeg, id, stored } = await pushedScan();
    expect(await t.core.images.exists(stored.image.originalKey)).toBe(true);
    const deletedAt = new Date(Date.UTC(2026, 10, 24, 12));
    const tombstone = await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { deletedAt }), null);
    expect(tombstone.deletedAt).toEqual(deletedAt);
    expect(await t.core.images.exists(stored.image.originalKey)).toBe(false);
    expect(await t.core.images.exists(stored.image.thumbnailKey)).toBe(false);
    // a replay of the deletion is still answered, with nothing left to remove
    expect((await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { deletedAt }), null)).deletedAt).toEqual(deletedAt);
  });

  describe('a scan the hub holds without its photo (files restored from an older backup than the database)', () => {
    async function photoLost() {
      const { t, deps, owner, jpeg, id, stored } = await pushedScan();
      const thumbnail = await t.core.images.get(stored.image.thumbnailKey);
      await t.core.images.delete(stored.image.originalKey);
      await t.core.images.delete(stored.image.thumbnailKey);
      return { t, deps, owner, jpeg, id, stored, thumbnail };
    }
    const at = new Date(Date.UTC(2026, 10, 25, 9));

    it('a push without the photo is answered CONFLICT (send it with its image), merging nothing', async () => {
      const { t, deps, owner, jpeg, id, stored } = await photoLost();
      const wire = await wireFor(id, jpeg, { measurementMm: 3.1, measuredAt: at });
      const error = await receiveSyncedScan(deps, owner, wire, null).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('not its photo') });
      expect(isScanRefusal(error)).toBe(false); // the desk sends it again, it does not skip it
      expect(await t.core.store.scans.get(id)).toEqual(stored);
    });

    it("the push with the photo puts photo and thumbnail back under the record's own names and merges the reading", async () => {
      const { t, deps, owner, jpeg, id, stored, thumbnail } = await photoLost();
      const merged = await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { measurementMm: 3.1, measuredAt: at }), jpeg);
      expect(merged.image).toEqual(stored.image);
      expect(merged.measurementMm).toBe(3.1);
      expect(await t.core.images.get(stored.image.originalKey)).toEqual(jpeg);
      expect(await t.core.images.get(stored.image.thumbnailKey)).toEqual(thumbnail);
    });

    it('a photo that is not the one the record was stored with is refused (about the scan) and nothing is written', async () => {
      const { t, deps, owner, id, stored } = await photoLost();
      const other = await makeJpeg({ width: 400, height: 300 });
      const error = await receiveSyncedScan(deps, owner, await wireFor(id, other), other).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('first stored with') });
      expect(isScanRefusal(error)).toBe(true);
      expect(await t.core.images.exists(stored.image.originalKey)).toBe(false);
    });

    it('a thumbnail that alone is gone is made again from the photo, without the desk sending anything', async () => {
      const { t, deps, owner, jpeg, id, stored, thumbnail } = await photoLost();
      await t.core.images.put(stored.image.originalKey, jpeg);
      await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { measurementMm: 5, measuredAt: at }), null);
      expect(await t.core.images.get(stored.image.thumbnailKey)).toEqual(thumbnail);
    });

    it('a deletion of such a scan needs no photo: the record becomes a tombstone', async () => {
      const { t, deps, owner, jpeg, id } = await photoLost();
      expect((await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { deletedAt: at }), null)).deletedAt).toEqual(at);
      expect((await t.core.store.scans.get(id))?.deletedAt).toEqual(at);
    });
  });

  describe('a scan the chain office made on the hub itself', () => {
    /** The office scans and gauges a tyre on the hub, signed in (no key); the account has a shop key too. */
    async function officeScan() {
      t = await testCore();
      const office = await accountCaller(t.core.services);
      const shop = (await t.core.services.apiKeys.create(office.account.id, 'Main street')).record;
      const id = (await t.core.services.scans.analyze(await command(office))).body.data.scanId;
      const stored = await t.core.services.scans.setMeasurement(office, id, 4.4);
      expect(stored.apiKeyId).toBeNull();
      const later = new Date(stored.measuredAt!.getTime() + 3_600_000);
      const deps = { store: t.core.store, images: t.core.images };
      return { t, deps, owner: { accountId: office.account.id, apiKeyId: shop.id }, id, stored, later };
    }

    it("a shop's later reading under the same id is refused: the office's reading stays", async () => {
      const { t, deps, owner, id, stored, later } = await officeScan();
      const wire = toSyncScan({ ...stored, apiKeyId: owner.apiKeyId, measurementMm: 1.2, measuredAt: later });
      const error = await receiveSyncedScan(deps, owner, wire, null).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('made on the hub itself') });
      expect(isScanRefusal(error)).toBe(true); // the shop skips it rather than sending it forever
      expect(await t.core.store.scans.get(id)).toEqual(stored);
    });

    it("a shop's deletion under the same id is refused: the scan and its photos stay", async () => {
      const { t, deps, owner, id, stored, later } = await officeScan();
      const wire = toSyncScan({ ...stored, apiKeyId: owner.apiKeyId, deletedAt: later });
      await expect(receiveSyncedScan(deps, owner, wire, null)).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(await t.core.store.scans.get(id)).toEqual(stored);
      expect(await t.core.images.exists(stored.image.originalKey)).toBe(true);
      expect(await t.core.images.exists(stored.image.thumbnailKey)).toBe(true);
    });
  });

  describe('two shops (API keys) of one account push the same id at once', () => {
    async function twoShops() {
      t = await testCore();
      const { account } = await accountCaller(t.core.services);
      const first = (await t.core.services.apiKeys.create(account.id, 'Main street')).record;
      const second = (await t.core.services.apiKeys.create(account.id, 'Harbour road')).record;
      const jpeg = await makeJpeg({ width: 320, height: 256 });
      const id = randomId();
      const deps = { store: t.core.store, images: t.core.images };
      const stored = await receiveSyncedScan(deps, { accountId: account.id, apiKeyId: first.id }, await wireFor(id, jpeg), jpeg);
      return { t, account, first, second, jpeg, id, stored };
    }
    const at = new Date(Date.UTC(2026, 10, 24, 13));

    it("the second shop's first push with a reading is refused and merges nothing into the first shop's copy", async () => {
      const { t, account, second, jpeg, id, stored } = await twoShops();
      const wire = await wireFor(id, jpeg, { measurementMm: 2.1, measuredAt: at });
      await expect(receiveSyncedScan(staleLookup(t), { accountId: account.id, apiKeyId: second.id }, wire, jpeg)).rejects.toMatchObject({
        code: 'FORBIDDEN',
        message: expect.stringContaining('Main street'),
      });
      expect(await t.core.store.scans.get(id)).toEqual(stored);
      expect(await t.core.images.exists(stored.image.originalKey)).toBe(true);
    });

    it("the second shop's deletion of an id it never sent is refused and deletes nothing", async () => {
      const { t, account, second, jpeg, id, stored } = await twoShops();
      const wire = await wireFor(id, jpeg, { deletedAt: at });
      await expect(receiveSyncedScan(staleLookup(t), { accountId: account.id, apiKeyId: second.id }, wire, null)).rejects.toMatchObject({
        code: 'FORBIDDEN',
      });
      expect(await t.core.store.scans.get(id)).toEqual(stored);
      expect(await t.core.images.exists(stored.image.originalKey)).toBe(true);
    });

    it("once the first shop's key is revoked, the shop that replaced it carries on: its deletion is merged and the photos go", async () => {
      const { t, account, first, second, jpeg, id, stored } = await twoShops();
      await t.core.services.apiKeys.revoke(account.id, first.id);
      const wire = await wireFor(id, jpeg, { deletedAt: at });
      const merged = await receiveSyncedScan(staleLookup(t), { accountId: account.id, apiKeyId: second.id }, wire, jpeg);
      expect(merged).toEqual({ ...stored, deletedAt: at });
      expect(await t.core.store.scans.get(id)).toEqual(merged);
      expect(await t.core.images.exists(stored.image.originalKey)).toBe(false);
      // and the push's own upload left nothing behind: the folder holds no photo of this id
      const folder = path.join(t.core.config.imagesDir, 'scans', id.slice(0, 2));
      expect((await readdir(folder).catch(() => [])).filter((f) => f.startsWith(id))).toEqual([]);
    });
  });
});
