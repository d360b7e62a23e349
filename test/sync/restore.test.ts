/**
 * A hub that lost what it had acknowledged: restored from a backup older than a desk's last push,
 * or holding a scan whose photo file is gone. The desk finds out from the mark the hub answers
 * each upload with (desk-marks.ts) and sends the lost changes again; the hub puts a lost photo
 * back from the desk's copy when the scan is sent again.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FetchLike } from '../../src/core/sync/hub-client.js';
import { DESK_ID_HEADER, DESK_SEQ_HEADER, HUB_DESK_SEQ_HEADER } from '../../src/core/sync/desk-marks.js';
import { META_DESK_ID } from '../../src/core/sync/push/desk-id.js';
import type { SyncService } from '../../src/core/sync/service.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import { expectError, signIn } from '../http/helpers.js';
import { analyze, call, deskSync, hubAccount, hubScans, removeNode, startNode, type Node } from './nodes.js';

let nodes: Node[] = [];
let services: SyncService[] = [];
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(services.map((service) => service.close()));
  await Promise.all(nodes.map(removeNode));
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  nodes = [];
  services = [];
  folders.length = 0;
});

/** Records every upload: its scan id, whether a photo went with it, and the hub's mark in the answer. */
function recordingFetch(): FetchLike & { uploads: Array<{ scanId: string; withImage: boolean; hubSeq: string | null }> } {
  const uploads: Array<{ scanId: string; withImage: boolean; hubSeq: string | null }> = [];
  return Object.assign(
    async (url: string, init: RequestInit) => {
      const response = await fetch(url, init);
      if (init.method === 'PUT') {
        const form = init.body as FormData;
        const scan = JSON.parse(form.get('scan') as string) as { scanId: string };
        uploads.push({ scanId: scan.scanId, withImage: form.has('image'), hubSeq: response.headers.get(HUB_DESK_SEQ_HEADER) });
      }
      return response;
    },
    { uploads },
  );
}

async function setUp() {
  const hub = await startNode();
  const desk = await startNode();
  nodes.push(hub, desk);
  const { key } = await hubAccount(hub);
  const { cookie } = await signIn(desk.app);
  const fetchLike = recordingFetch();
  const sync = deskSync(desk, { hubUrl: hub.url, hubApiKey: key }, { fetch: fetchLike });
  services.push(sync);
  return { hub, desk, key, cookie, sync, fetchLike };
}

/** Starts a stopped hub again on its data folder and port. */
async function startAgain(hub: Node): Promise<Node> {
  const again = await startNode({ dataDir: hub.dataDir, port: hub.port });
  nodes[nodes.indexOf(hub)] = again;
  return again;
}

/** The hub's nightly backup: its whole data folder, copied while it is stopped; then it runs again. */
async function backUp(hub: Node): Promise<{ hub: Node; backup: string }> {
  const backup = await mkdtemp(path.join(os.tmpdir(), 'tirewear-hub-backup-'));
  folders.push(backup);
  await hub.server.close();
  await cp(hub.dataDir, backup, { recursive: true });
  return { hub: await startAgain(hub), backup };
}

/** The hub's disk fails and its folder is restored from `backup`; `whileDown` runs while it is stopped. */
async function restore(hub: Node, backup: string, whileDown: () => Promise<void> = async () => undefined): Promise<Node> {
  await hub.server.close();
  await whileDown();
  await rm(hub.dataDir, { recursive: true, force: true });
  await cp(backup, hub.dataDir, { recursive: true });
  return startAgain(hub);
}

it('a hub restored from a backup older than the last push gets the changes it lost sent again, with their photos', async () => {
  let { hub, desk, key, cookie, sync, fetchLike } = await setUp();
  const early = [await analyze(desk, cookie), await analyze(desk, cookie)];
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 2, error: null });

  let backup: string;
  ({ hub, backup } = await backUp(hub));

  const late = [await analyze(desk, cookie), await analyze(desk, cookie)];
  await call(desk, cookie, 'PUT', `/api/v1/scans/${early[0]!.scanId}/measurement`, { measurementMm: 4.4 });
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 3, error: null });
  expect(await hubScans(hub, key)).toHaveLength(4);

  // the hub's disk fails; it is restored from last night's backup: the two late scans and the reading are gone
  let after!: Awaited<ReturnType<typeof analyze>>;
  hub = await restore(hub, backup, async () => {
    after = await analyze(desk, cookie);
    expect((await sync.pusher!.runOnce()).error).toMatch(/unreachable/i); // the hub is down meanwhile
  });
  expect(await hubScans(hub, key)).toHaveLength(2);

  fetchLike.uploads.length = 0;
  const pass = await sync.pusher!.runOnce();
  expect(pass.error).toBeNull();
  const onHub = await hubScans(hub, key);
  expect(onHub.map((scan) => scan.scanId).sort()).toEqual([...early, ...late, after].map((scan) => scan.scanId).sort());
  expect(onHub.find((scan) => scan.scanId === early[0]!.scanId)?.measurementMm).toBe(4.4);
  for (const made of [...late, after]) {
    const image = await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${made.scanId}/image`, headers: { 'x-api-key': key } });
    expect(image.statusCode).toBe(200);
    expect(image.rawPayload.equals(made.image)).toBe(true);
  }
  // the first answer gave the backup's mark (two changes); only what came after it went again,
  // each lost scan first without its photo and then with it, the early scans not at all
  expect(fetchLike.uploads[0]).toEqual({ scanId: after.scanId, withImage: true, hubSeq: '2' });
  const again = fetchLike.uploads.slice(1).map(({ scanId, withImage }) => ({ scanId, withImage }));
  expect(again).toEqual([
    { scanId: late[0]!.scanId, withImage: false },
    { scanId: late[0]!.scanId, withImage: true },
    { scanId: late[1]!.scanId, withImage: false },
    { scanId: late[1]!.scanId, withImage: true },
    { scanId: early[0]!.scanId, withImage: false },
    { scanId: after.scanId, withImage: false },
  ]);
  expect(await sync.status()).toMatchObject({ pending: 0, skipped: 0, lastError: null });

  // and the next pass finds the hub caught up: nothing is sent again
  fetchLike.uploads.length = 0;
  await analyze(desk, cookie);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  expect(fetchLike.uploads).toHaveLength(1);
});

it('an idle desk asks the hub for its mark at start, after the hub was away, and hourly, and catches a restore that way', async () => {
  let { hub, desk, key, cookie, sync, fetchLike } = await setUp();
  const early = await analyze(desk, cookie);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  let backup: string;
  ({ hub, backup } = await backUp(hub));
  const late = await analyze(desk, cookie);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });

  // nothing new and the last check was just now: an idle pass sends nothing
  fetchLike.uploads.length = 0;
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 0, error: null });
  expect(fetchLike.uploads).toHaveLength(0);

  // the hub is restored from the backup (without the late scan) while the desk has nothing to send
  hub = await restore(hub, backup);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 0, error: null }); // within the hour: not asked yet
  desk.clock.advance(61 * 60_000);
  expect(await sync.pusher!.runOnce()).toMatchObject({ error: null });
  // the last acknowledged change went again as the question, found missing (so with its photo),
  // and the hub's answer (its backup's mark) sent everything after that mark again
  expect(fetchLike.uploads.map(({ scanId, withImage }) => ({ scanId, withImage }))).toEqual([
    { scanId: late.scanId, withImage: false },
    { scanId: late.scanId, withImage: true },
    { scanId: late.scanId, withImage: false },
  ]);
  expect(fetchLike.uploads[1]?.hubSeq).toBe('1');
  expect((await hubScans(hub, key)).map((scan) => scan.scanId).sort()).toEqual([early.scanId, late.scanId].sort());

  // a question the hub could not answer (it was away) is asked again at the next pass, hour or not
  desk.clock.advance(61 * 60_000);
  await hub.server.close();
  expect((await sync.pusher!.runOnce()).error).toMatch(/unreachable/i);
  hub = await startAgain(hub);
  fetchLike.uploads.length = 0;
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 0, error: null });
  expect(fetchLike.uploads).toEqual([{ scanId: late.scanId, withImage: false, hubSeq: '2' }]); // caught up: nothing more
  expect(await sync.status()).toMatchObject({ lastError: null, pending: 0 });
});

it('a scan the hub holds without its photo gets the photo back when the desk sends the scan again', async () => {
  const { hub, desk, key, cookie, sync } = await setUp();
  const made = await analyze(desk, cookie);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  const onHub = (await hub.server.core.store.scans.get(made.scanId))!;
  await hub.server.core.images.delete(onHub.image.originalKey);
  await hub.server.core.images.delete(onHub.image.thumbnailKey);

  await call(desk, cookie, 'PUT', `/api/v1/scans/${made.scanId}/measurement`, { measurementMm: 2.2 });
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  const image = await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${made.scanId}/image`, headers: { 'x-api-key': key } });
  expect(image.statusCode).toBe(200);
  expect(image.rawPayload.equals(made.image)).toBe(true);
  const thumbnail = await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${made.scanId}/image?variant=thumbnail`, headers: { 'x-api-key': key } });
  expect(thumbnail.statusCode).toBe(200);
  expect((await hubScans(hub, key))[0]?.measurementMm).toBe(2.2);
});

it('the hub keeps a mark per shop key and desk, and refuses malformed desk headers without storing anything', async () => {
  const { hub, desk, key, cookie, sync } = await setUp();
  const made = await analyze(desk, cookie);
  expect(await sync.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
  const deskId = await desk.server.core.store.meta.get(META_DESK_ID);
  expect(deskId).toMatch(/^[0-9a-f]{32}$/);
  const scan = toSyncScan((await desk.server.core.store.scans.get(made.scanId))!);

  const upload = (headers: Record<string, string>) => {
    const boundary = '----tirewear-restore-test';
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="scan"\r\n\r\n${JSON.stringify(scan)}\r\n--${boundary}--\r\n`;
    return hub.app.inject({
      method: 'PUT',
      url: `/api/v1/sync/scans/${scan.scanId}`,
      payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-api-key': key, ...headers },
    });
  };
  // the same desk again: its mark; another desk of the same shop: none yet; a desk naming none (an older version): no header
  expect((await upload({ [DESK_ID_HEADER]: deskId!, [DESK_SEQ_HEADER]: '1' })).headers[HUB_DESK_SEQ_HEADER.toLowerCase()]).toBe('1');
  expect((await upload({ [DESK_ID_HEADER]: 'another-desk', [DESK_SEQ_HEADER]: '7' })).headers[HUB_DESK_SEQ_HEADER.toLowerCase()]).toBe('0');
  expect((await upload({ [DESK_ID_HEADER]: 'another-desk', [DESK_SEQ_HEADER]: '3' })).headers[HUB_DESK_SEQ_HEADER.toLowerCase()]).toBe('7');
  const plain = await upload({});
  expect(plain.statusCode).toBe(200);
  expect(plain.headers[HUB_DESK_SEQ_HEADER.toLowerCase()]).toBeUndefined();

  for (const [headers, words] of [
    [{ [DESK_ID_HEADER]: deskId! }, 'go together'],
    [{ [DESK_SEQ_HEADER]: '4' }, 'go together'],
    [{ [DESK_ID_HEADER]: 'x', [DESK_SEQ_HEADER]: '4' }, 'letters'],
    [{ [DESK_ID_HEADER]: '../../etc/passwd', [DESK_SEQ_HEADER]: '4' }, 'letters'],
    [{ [DESK_ID_HEADER]: deskId!, [DESK_SEQ_HEADER]: '0' }, 'whole number'],
    [{ [DESK_ID_HEADER]: deskId!, [DESK_SEQ_HEADER]: '-3' }, 'whole number'],
    [{ [DESK_ID_HEADER]: deskId!, [DESK_SEQ_HEADER]: '1e3' }, 'whole number'],
    [{ [DESK_ID_HEADER]: deskId!, [DESK_SEQ_HEADER]: '99999999999999999' }, 'whole number'],
  ] as const) {
    const message = expectError(await upload(headers), 400, 'VALIDATION_ERROR');
    expect(message).toContain(words);
  }
  expect(await hubScans(hub, key)).toHaveLength(1);
});
