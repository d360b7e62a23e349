/**
 * The pusher on its own: a desktop that stops in the middle of a sync (network lost,
 * app quit) picks up where the hub last acknowledged, since the cursor is in the
 * desktop's own database; a change that can never go is skipped, not retried forever.
 */
import { afterEach, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { FetchLike } from '../../src/core/sync/hub-client.js';
import type { SyncService } from '../../src/core/sync/service.js';
import { signIn } from '../http/helpers.js';
import { analyze, call, hubAccount, hubScans, removeNode, deskSync, startNode, type Node } from './nodes.js';

let nodes: Node[] = [];
let services: SyncService[] = [];
afterEach(async () => {
  await Promise.all(services.map((service) => service.close()));
  await Promise.all(nodes.map(removeNode));
  nodes = [];
  services = [];
});

/** Counts uploads; after `allowed` of them the network is gone. */
function countingFetch(allowed = Infinity): FetchLike & { uploads: number } {
  const wrapped = Object.assign(
    async (url: string, init: RequestInit) => {
      if (init.method === 'PUT') {
        if (wrapped.uploads >= allowed) throw new TypeError('fetch failed');
        wrapped.uploads++;
      }
      return fetch(url, init);
    },
    { uploads: 0 },
  );
  return wrapped;
}

function service(desk: Node, link: { hubUrl: string; hubApiKey: string }, fetchLike: FetchLike): SyncService {
  const created = deskSync(desk, link, { fetch: fetchLike });
  services.push(created);
  return created;
}

/** A hub with an account and its key, and a desktop signed in (not linked: each test drives its own pusher). */
async function hubAndDesk() {
  const hub = await startNode();
  const desk = await startNode();
  nodes.push(hub, desk);
  const { key } = await hubAccount(hub);
  const { cookie } = await signIn(desk.app);
  return { hub, desk, key, cookie };
}

it('resumes from the last acknowledged change after a restart mid-sync', async () => {
  const hub = await startNode();
  nodes.push(hub);
  const { key } = await hubAccount(hub);
  const desk = await startNode();
  nodes.push(desk);
  const { cookie } = await signIn(desk.app);
  for (let i = 0; i < 5; i++) await analyze(desk, cookie);
  const link = { hubUrl: hub.url, hubApiKey: key };

  const cut = countingFetch(2);
  const first = service(desk, link, cut);
  const interrupted = await first.pusher!.runOnce();
  expect(interrupted).toMatchObject({ pushed: 2 });
  expect(interrupted.error).toMatch(/unreachable/i);
  await first.close();
  await desk.server.close();

  const restarted = await startNode({ dataDir: desk.dataDir });
  nodes[1] = restarted;
  const whole = countingFetch();
  const second = service(restarted, link, whole);
  expect((await second.status()).pending).toBe(3);
  expect(await second.pusher!.runOnce()).toEqual({ pushed: 3, error: null });
  expect(whole.uploads).toBe(3);
  expect(await hubScans(hub, key)).toHaveLength(5);
});

it('skips a scan whose photo is gone from this computer, says so, and pushes the rest', async () => {
  const { hub, desk, key, cookie } = await hubAndDesk();
  const made = [await analyze(desk, cookie), await analyze(desk, cookie), await analyze(desk, cookie)];
  const lost = (await desk.server.core.store.scans.get(made[1]!.scanId))!;
  await desk.server.core.images.delete(lost.image.originalKey);

  const sync = service(desk, { hubUrl: hub.url, hubApiKey: key }, countingFetch());
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 2, error: null });
  const status = await sync.status();
  expect(status.pending).toBe(0);
  expect(status.lastError).toContain(`Scan ${lost.id} was not synced`);
  expect((await hubScans(hub, key)).map((s) => s.scanId).sort()).toEqual([made[0]!.scanId, made[2]!.scanId].sort());
});

it('holds a scan whose photo cannot be read now (a disk or permission error) instead of skipping it for good', async () => {
  const { hub, desk, key, cookie } = await hubAndDesk();
  const made = await analyze(desk, cookie);
  const images = desk.server.core.images;
  let broken = true;
  const flaky = {
    ...images,
    get: (k: string) => (broken ? Promise.reject(new AppError('STORAGE_UNAVAILABLE', 'EIO reading the photo')) : images.get(k)),
  };
  const sync = deskSync(desk, { hubUrl: hub.url, hubApiKey: key }, { fetch: countingFetch(), images: flaky });
  const failed = await sync.pusher!.runOnce();
  expect(failed.pushed).toBe(0);
  expect(failed.error).toMatch(/EIO reading the photo/);
  expect(await sync.status()).toMatchObject({ pending: 1, skipped: 0 });
  broken = false;
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  expect((await hubScans(hub, key)).map((scan) => scan.scanId)).toEqual([made.scanId]);
  await sync.close();
});

/** Records, upload by upload, whether the photo went with it. */
function photoFetch(): FetchLike & { sent: Array<'photo' | 'no photo'> } {
  const sent: Array<'photo' | 'no photo'> = [];
  return Object.assign(
    async (url: string, init: RequestInit) => {
      if (init.method === 'PUT') sent.push((init.body as FormData).has('image') ? 'photo' : 'no photo');
      return fetch(url, init);
    },
    { sent },
  );
}

it('a gauge reading of a scan the hub has goes without the photo; one the hub lacks goes again with it', async () => {
  const { hub, desk, key, cookie } = await hubAndDesk();
  const { scanId } = await analyze(desk, cookie);
  const uploads = photoFetch();
  const sync = service(desk, { hubUrl: hub.url, hubApiKey: key }, uploads);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  expect(uploads.sent).toEqual(['photo']); // a new scan goes with its photo

  // the shop gauges the tyre: only the reading travels, the hub keeps the photo it has
  expect((await call(desk, cookie, 'PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 4.5 })).statusCode).toBe(200);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  expect(uploads.sent).toEqual(['photo', 'no photo']);
  expect(await hubScans(hub, key)).toMatchObject([{ scanId, measurementMm: 4.5 }]);

  // a scan gauged before the hub ever had it: tried without, then sent again with its photo
  const second = await analyze(desk, cookie);
  expect((await call(desk, cookie, 'PUT', `/api/v1/scans/${second.scanId}/measurement`, { measurementMm: 3.0 })).statusCode).toBe(200);
  uploads.sent.length = 0;
  expect((await sync.pusher!.runOnce()).error).toBeNull();
  expect(uploads.sent).toEqual(['no photo', 'photo']);
  expect((await hubScans(hub, key)).find((scan) => scan.scanId === second.scanId)).toMatchObject({ measurementMm: 3.0 });
});

it('backs off exponentially with jitter, capped at five minutes', async () => {
  const { backoffDelay, BACKOFF_CAP_MS } = await import('../../src/core/sync/push/timing.js');
  expect([1, 2, 3].map((n) => backoffDelay(n, () => 1))).toEqual([2_000, 4_000, 8_000]);
  expect(backoffDelay(3, () => 0)).toBe(4_000);
  expect(backoffDelay(30, () => 1)).toBe(BACKOFF_CAP_MS);
});
