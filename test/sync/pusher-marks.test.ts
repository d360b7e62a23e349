/**
 * The pusher's checks of the hub's marks (desk-marks.ts) against a scripted hub that keeps a mark
 * exactly as routes/sync.ts does: the answer carries the mark before the upload, which is raised
 * after the scan is stored or refused for good. The cases a review of the first version found:
 * a rewind during a replay of skipped changes, skips counted twice, an idle desk asking every pass.
 */
import { expect, it } from 'vitest';
import { HubError, type HubClient, type PushAnswer } from '../../src/core/sync/hub-client.js';
import { readSkipped } from '../../src/core/sync/push/skipped.js';
import { createSyncPusher } from '../../src/core/sync/pusher.js';
import type { ScanRecord } from '../../src/core/types.js';
import { makeScan } from '../support/store.js';
import { createLogger } from '../../src/core/logger.js';

function world(n: number, options: { refuse?: Set<string> } = {}) {
  const changes = Array.from({ length: n }, (_, i) => ({ seq: i + 1, scan: makeScan({ id: `scan-${String(i + 1).padStart(12, '0')}` }) }));
  const id = (seq: number) => changes[seq - 1]!.scan.id;
  const meta = new Map<string, string>();
  const hub = { mark: 0, stored: new Set<string>(), log: [] as string[], keepsMarks: true };
  const client = {
    async pushScan(wire, image, position): Promise<PushAnswer> {
      hub.log.push(`${wire.scanId}${image ? '+photo' : ''}`);
      const before = hub.mark;
      if (options.refuse?.has(wire.scanId)) {
        if (position && position.seq > hub.mark) hub.mark = position.seq;
        throw new HubError('Hub answered 422 IMAGE_UNREADABLE: refused', 422, 'IMAGE_UNREADABLE', true);
      }
      if (!hub.stored.has(wire.scanId) && !image) return { outcome: 'needs-image', hubSeq: null };
      hub.stored.add(wire.scanId);
      if (position && position.seq > hub.mark) hub.mark = position.seq;
      return { outcome: 'stored', hubSeq: hub.keepsMarks && position ? before : null };
    },
  } as Pick<HubClient, 'pushScan'> as HubClient;
  let now = Date.UTC(2026, 10, 25, 9);
  const pusher = createSyncPusher({
    store: {
      scans: { changesSince: async (after: number, limit: number) => changes.filter((c) => c.seq > after).slice(0, limit) },
      meta: { get: async (k: string) => meta.get(k) ?? null, set: async (k: string, v: string) => void meta.set(k, v) },
    } as never,
    images: { get: async () => Buffer.from('photo') } as never,
    hub: client,
    clock: { now: () => new Date(now) },
    logger: createLogger({ level: 'silent' }),
    cursorKey: 'cursor',
    skippedKey: 'skipped',
    replayKey: 'replay',
    reachedKey: 'reached',
    ackedKey: 'acked',
  });
  const restore = (mark: number) => {
    hub.mark = mark;
    for (const change of changes) if (change.seq > mark) hub.stored.delete(change.scan.id);
  };
  const add = (scan: ScanRecord) => changes.push({ seq: changes.length + 1, scan });
  return { changes, id, meta, hub, pusher, restore, add, advance: (ms: number) => (now += ms) };
}

it('a rewind during a replay of skipped changes never moves the cursor forward past changes still to be sent', async () => {
  const refuse = new Set<string>();
  const w = world(30, { refuse });
  refuse.add(w.id(3)).add(w.id(4));
  expect(await w.pusher.runOnce()).toEqual({ pushed: 28, error: null });
  expect(readSkipped(w.meta.get('skipped') ?? null)).toMatchObject({ count: 2, fromSeq: 3 });
  // the hub is mended (it takes both now), then restored from a backup whose mark is 20
  refuse.clear();
  w.restore(20);
  // "send skipped again" (service.ts): the cursor back to before the first skip, the state cleared
  w.meta.set('replay', w.meta.get('cursor')!);
  w.meta.set('cursor', '2');
  w.meta.set('skipped', '');
  expect((await w.pusher.runOnce()).error).toBeNull();
  for (let seq = 1; seq <= 30; seq++) expect(w.hub.stored.has(w.id(seq))).toBe(true);
  expect(readSkipped(w.meta.get('skipped') ?? null).count).toBe(0);
});

it('a change refused for good and refused again after a rewind is counted once', async () => {
  const refuse = new Set<string>();
  const counted = world(10, { refuse });
  refuse.add(counted.id(6));
  expect(await counted.pusher.runOnce()).toEqual({ pushed: 9, error: null });
  expect(readSkipped(counted.meta.get('skipped') ?? null)).toMatchObject({ count: 1, fromSeq: 6, lastSeq: 6 });
  counted.restore(4); // the hub lost changes 5 to 10
  counted.add(makeScan({ id: 'scan-000000000011' }));
  expect((await counted.pusher.runOnce()).error).toBeNull();
  expect(readSkipped(counted.meta.get('skipped') ?? null)).toMatchObject({ count: 1, fromSeq: 6 });
  for (const seq of [5, 7, 8, 9, 10]) expect(counted.hub.stored.has(counted.id(seq))).toBe(true);
});

it('an idle desk whose hub answers without marks (an older version) asks it hourly, not on every pass', async () => {
  const w = world(3);
  expect(await w.pusher.runOnce()).toEqual({ pushed: 3, error: null });
  w.hub.keepsMarks = false;
  w.advance(61 * 60_000);
  w.hub.log.length = 0;
  for (let i = 0; i < 5; i++) {
    await w.pusher.runOnce();
    w.advance(10_000);
  }
  expect(w.hub.log).toEqual([w.id(3)]); // asked once
  w.advance(60 * 60_000);
  await w.pusher.runOnce();
  expect(w.hub.log).toEqual([w.id(3), w.id(3)]);
});

it('a change taken before and refused only after a rewind moves the start of "send skipped again" to it', async () => {
  const refuse = new Set<string>();
  const w = world(8, { refuse });
  refuse.add(w.id(6));
  expect(await w.pusher.runOnce()).toEqual({ pushed: 7, error: null });
  w.restore(2); // the hub lost 3 to 8, and now refuses 4 too
  refuse.add(w.id(4));
  w.add(makeScan({ id: 'scan-000000000009' }));
  expect((await w.pusher.runOnce()).error).toBeNull();
  expect(readSkipped(w.meta.get('skipped') ?? null)).toMatchObject({ fromSeq: 4 });
});
