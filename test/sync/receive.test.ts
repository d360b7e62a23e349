/**
 * The hub's receiving side against the storage audit of 2026-11-24: a refused first push must
 * leave the owner's photo as it was (two first pushes of one id at once), and a deletion synced
 * from a shop removes the photos on the hub as a deletion made there does.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/services/ids.js';
import { receiveSyncedScan } from '../../src/core/sync/receive.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { testCore, type TestCore } from '../support/core.js';
import { makeScan, randomId } from '../support/store.js';

let t: TestCore | null = null;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

async function wireFor(id: string, jpeg: Buffer, overrides: Parameters<typeof makeScan>[0] = {}) {
  const record = makeScan({ id, source: 'session', ...overrides });
  return toSyncScan({ ...record, image: { ...record.image, mime: 'image/jpeg', sha256: sha256Hex(jpeg), bytes: jpeg.length } });
}

describe('receiving a pushed scan on the hub', () => {
  it('a first push refused because another account stored the id meanwhile leaves that account\'s photo as it was', async () => {
    t = await testCore();
    const deps = { store: t.core.store, images: t.core.images };
    const id = randomId();
    const [mine, theirs] = [await makeJpeg({ width: 320, height: 256 }), await makeJpeg({ width: 400, height: 300 })];
    const stored = await receiveSyncedScan(deps, { accountId: 'acct-owner', apiKeyId: null }, await wireFor(id, mine), mine);
    const photo = await t.core.images.get(stored.image.originalKey);
    // the other push looked the id up before the owner's commit (two first pushes at once)
    const stale = { ...deps, store: { ...t.core.store, scans: { ...t.core.store.scans, get: async () => null } } };
    await expect(receiveSyncedScan(stale, { accountId: 'acct-other', apiKeyId: null }, await wireFor(id, theirs), theirs)).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await t.core.images.get(stored.image.originalKey)).toEqual(photo);
    expect((await t.core.store.scans.get(id))?.image).toEqual(stored.image);
    // and the refused push's own files are gone: only the owner's two remain in the id's folder
    const folder = path.join(t.core.config.imagesDir, 'scans', id.slice(0, 2));
    expect((await readdir(folder)).sort()).toEqual([path.basename(stored.image.originalKey), path.basename(stored.image.thumbnailKey)].sort());
  });

  it('a deletion synced from the shop removes the photos on the hub; the record stays as a tombstone', async () => {
    t = await testCore();
    const deps = { store: t.core.store, images: t.core.images };
    const owner = { accountId: 'acct-owner', apiKeyId: null };
    const jpeg = await makeJpeg({ width: 320, height: 256 });
    const id = randomId();
    const stored = await receiveSyncedScan(deps, owner, await wireFor(id, jpeg), jpeg);
    expect(await t.core.images.exists(stored.image.originalKey)).toBe(true);
    const deletedAt = new Date(Date.UTC(2026, 10, 24, 12));
    const tombstone = await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { deletedAt }), null);
    expect(tombstone.deletedAt).toEqual(deletedAt);
    expect(await t.core.images.exists(stored.image.originalKey)).toBe(false);
    expect(await t.core.images.exists(stored.image.thumbnailKey)).toBe(false);
    // a replay of the deletion is still answered, with nothing left to remove
    expect((await receiveSyncedScan(deps, owner, await wireFor(id, jpeg, { deletedAt }), null)).deletedAt).toEqual(deletedAt);
  });
});
