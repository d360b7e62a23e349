/**
 * The desktop's outbox pusher. It walks store.scans.changesSince(cursor) and upserts
 * each change on the hub; the cursor moves (in store.meta) only after the hub has
 * acknowledged, so a restart resumes where it stopped and at worst re-sends one
 * change, which the hub's idempotent upsert absorbs. Failures back off exponentially
 * with jitter. Nothing here is awaited by the scan path: scanning never waits on the network.
 *
 * Only a refusal the hub makes about the scan itself (HubError.refusesScan, or its photo
 * missing here) skips that change: it is counted in the link's skipped state (the count and
 * the first skipped change), which linking again with the same hub and key replays
 * (service.ts). Everything else stops the pass and is retried, whatever its HTTP status.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import type { ScanRecord } from '../types.js';
import { randomId } from '../services/support/ids.js';
import type { DeskPosition } from './desk-marks.js';
import { HubError, type HubClient, type PushAnswer } from './hub-client.js';
import { toSyncScan } from './wire.js';
import { isAppError } from '../errors.js';

export const META_LAST_SYNC_AT = 'sync.lastSyncAt';
export const META_LAST_ERROR = 'sync.lastError';

export const BACKOFF_BASE_MS = 2_000;
export const BACKOFF_CAP_MS = 5 * 60_000;
/** How often an idle pusher looks for new changes. */
export const IDLE_POLL_MS = 10_000;
const BATCH = 25;
/** How often an idle desk checks that its hub still has what it acknowledged (desk-marks.ts). */
export const PROBE_INTERVAL_MS = 60 * 60_000;

/**
 * The changes a link skipped since it was made (or last replayed): how many, the first one's seq,
 * and the last one's (a change sent again after a hub restore and refused again is not counted twice).
 */
export interface SkippedState {
  count: number;
  fromSeq: number;
  lastSeq: number;
}

export function readSkipped(value: string | null): SkippedState {
  try {
    const parsed = JSON.parse(value ?? '') as Partial<SkippedState>;
    if (Number.isSafeInteger(parsed.count) && Number.isSafeInteger(parsed.fromSeq) && parsed.count! > 0) {
      // a state written before lastSeq was kept: its last skip is unknown, so none is taken as counted
      const lastSeq = Number.isSafeInteger(parsed.lastSeq) ? parsed.lastSeq! : 0;
      return { count: parsed.count!, fromSeq: parsed.fromSeq!, lastSeq };
    }
  } catch {
    // nothing skipped yet
  }
  return { count: 0, fromSeq: 0, lastSeq: 0 };
}

export interface Timers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (run, ms) => {
    const handle = setTimeout(run, ms);
    handle.unref();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface PusherDeps {
  store: Pick<Store, 'scans' | 'meta'>;
  images: ImageStore;
  hub: HubClient;
  clock: Clock;
  logger: Logger;
  /** Meta key of this link's cursor (a new hub or account starts from the beginning). */
  cursorKey: string;
  /** Meta key of this link's SkippedState. */
  skippedKey: string;
  /**
   * Meta key of the seq up to which changes were already handled once (a replay after
   * linking again): those go without their photo first, as the hub has most of them.
   */
  replayKey: string;
  /**
   * Meta key, per hub address whatever the key, of the highest seq that hub acknowledged. A new
   * link to the same hub (a rotated key) replays up to it, without photos first: the hub has them.
   */
  reachedKey?: string;
  /**
   * Meta key of this link's highest change the hub answered for with its mark (desk-marks.ts):
   * a later answer whose mark is below it means the hub lost changes it had (restored from a
   * backup), and everything after its mark is sent again. Without it the marks are not checked.
   */
  ackedKey?: string;
  timers?: Timers;
  random?: () => number;
}

export interface PassResult {
  pushed: number;
  /** The pass stopped on this error and will be retried (null: everything pending was handled). */
  error: string | null;
}

export interface SyncPusher {
  /** Push everything pending now; never throws (the error is recorded and returned). */
  runOnce(): Promise<PassResult>;
  /** Start the background loop. */
  start(): void;
  /** Stop the loop and any pass between two changes; waits for the push in flight (abort it through the hub client's signal). */
  close(): Promise<void>;
}

/** Delay before retry number `failures` (1, 2, ...): doubling from the base, capped, with full jitter on half of it. */
export function backoffDelay(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export function createSyncPusher(deps: PusherDeps): SyncPusher {
  const { store, hub, logger } = deps;
  const timers = deps.timers ?? realTimers;
  const random = deps.random ?? Math.random;
  let closed = false;
  let failures = 0;
  let timer: unknown = null;
  let running: Promise<PassResult> | null = null;
  /** When an idle pass next asks the hub for its mark (probe in pass); 0: at the next pass. */
  let probeDueAt = 0;
  /** This computer's desk id, read (or made) by the first pass. */
  let deskId: string | null = null;

  async function loadImage(scan: ScanRecord): Promise<{ data: Buffer; mime: string }> {
    // only a photo that is gone is skipped for good; a read that failed (permissions, a disk
    // error: STORAGE_UNAVAILABLE) fails the pass, which is retried, the scan held until it reads
    const data = await deps.images.get(scan.image.originalKey).catch((error: unknown) => {
      if (isAppError(error) && error.code === 'NOT_FOUND') return null;
      throw error;
    });
    if (data === null) throw new LocalImageMissing(scan.id);
    return { data, mime: scan.image.mime };
  }

  /**
   * A deletion goes alone (the hub keeps a tombstone even of a scan it never saw). A new
   * scan goes with its image. An edit goes without, and again with the image only when
   * the hub turns out not to have the scan yet.
   */
  async function pushOne(scan: ScanRecord, replay: boolean, position: DeskPosition): Promise<PushAnswer> {
    const wire = toSyncScan(scan);
    if (scan.deletedAt !== null) return hub.pushScan(wire, null, position);
    const withoutImageFirst = replay || scan.measuredAt !== null;
    if (withoutImageFirst) {
      const answer = await hub.pushScan(wire, null, position);
      if (answer.outcome === 'stored') return answer;
    }
    return hub.pushScan(wire, await loadImage(scan), position);
  }

  /** Before the cursor moves past it: a crash cannot lose the record of a skipped change. */
  async function recordSkip(seq: number): Promise<void> {
    const state = readSkipped(await store.meta.get(deps.skippedKey));
    if (state.count > 0 && seq <= state.lastSeq) {
      // at or below the last skip: counted already if it was skipped before, and whether or not,
      // a replay of the skipped changes must start at it (it may be one refused only since a rewind)
      if (seq < state.fromSeq) await store.meta.set(deps.skippedKey, JSON.stringify({ ...state, fromSeq: seq }));
      return;
    }
    const next: SkippedState = {
      count: state.count + 1,
      fromSeq: state.count > 0 ? Math.min(state.fromSeq, seq) : seq,
      lastSeq: Math.max(state.lastSeq, seq),
    };
    await store.meta.set(deps.skippedKey, JSON.stringify(next));
  }

  async function pass(): Promise<PassResult> {
    let cursor = Number((await store.meta.get(deps.cursorKey)) ?? 0);
    let replayUntil = Number((await store.meta.get(deps.replayKey)) || 0);
    let reached = deps.reachedKey ? Number((await store.meta.get(deps.reachedKey)) || 0) : 0;
    if (cursor === 0 && reached > replayUntil) {
      // a link that has pushed nothing yet, to a hub this computer pushed to before: kept, so a
      // pass cut short resumes as a replay too
      replayUntil = reached;
      await store.meta.set(deps.replayKey, String(replayUntil));
    }
    // kept in memory and saved once a batch (and when the pass ends), not on every change: it only
    // spares a rotated key's photos, so one lost to a crash costs a few photos sent again
    let reachedSaved = reached;
    const saveReached = async () => {
      if (!deps.reachedKey || reached <= reachedSaved) return;
      await store.meta.set(deps.reachedKey, String(reached));
      reachedSaved = reached;
    };
    deskId ??= await deskIdOf(store.meta);
    const position = (seq: number) => ({ deskId: deskId!, seq });
    let acked = deps.ackedKey ? Number((await store.meta.get(deps.ackedKey)) || 0) : 0;
    let ackedSaved = acked;
    // once a pass: a hub whose marks keep falling behind (it cannot write them) is not chased round
    let rewound = false;
    // saved like reached: one lost to a crash only makes a later check less strict
    const saveAcked = async () => {
      if (!deps.ackedKey || acked <= ackedSaved) return;
      await store.meta.set(deps.ackedKey, String(acked));
      ackedSaved = acked;
    };
    let pushed = 0;
    let skipped: string | null = null;
    /** The hub answers again: the last failure on the status line is over (a skip of this pass stays). */
    const hubAnswered = async () => {
      if (skipped !== null) return;
      await store.meta.set(META_LAST_ERROR, '');
      await store.meta.set(META_LAST_SYNC_AT, deps.clock.now().toISOString());
    };
    /**
     * After the hub answered a push of change `seq` with its mark: true when the mark is below what
     * it had answered for before (`acked`), so it lost the changes between (a restore) and the
     * cursor now stands at its mark, everything after going again without photos first (it may
     * still have some), this change included.
     */
    const rewindIfLost = async (seq: number, hubSeq: number | null): Promise<boolean> => {
      if (!deps.ackedKey) return false;
      // asked, whatever the answer: a hub that keeps no marks (an older version) is asked hourly, not every pass
      probeDueAt = deps.clock.now().getTime() + PROBE_INTERVAL_MS;
      if (hubSeq === null) return false;
      if (hubSeq >= acked || rewound) {
        acked = Math.max(acked, seq);
        return false;
      }
      logger.warn({ hubSeq, acked }, 'the hub no longer has changes it had acknowledged (restored from a backup?); sending them again');
      rewound = true;
      replayUntil = Math.max(replayUntil, seq);
      await store.meta.set(deps.replayKey, String(replayUntil));
      acked = Math.max(hubSeq, seq); // the hub's mark now that it stored this one
      await store.meta.set(deps.ackedKey, String(acked));
      ackedSaved = acked;
      // back to the hub's mark, never forward: a replay of skipped changes may stand below it
      cursor = Math.min(cursor, hubSeq);
      await store.meta.set(deps.cursorKey, String(cursor));
      return true;
    };
    /**
     * Nothing to send: an idle desk asks the hub for its mark now and then (at start, after a
     * failed pass, else hourly) by sending its last acknowledged change again, without its photo.
     * True when that found the hub behind (rewindIfLost).
     */
    const probe = async (): Promise<boolean> => {
      if (!deps.ackedKey || acked === 0 || rewound || deps.clock.now().getTime() < probeDueAt) return false;
      const [last] = await store.scans.changesSince(acked - 1, 1);
      // that change was followed by one skipped since: sending either again proves nothing
      if (!last || last.seq !== acked) {
        probeDueAt = deps.clock.now().getTime() + PROBE_INTERVAL_MS;
        return false;
      }
      let answer: PushAnswer;
      try {
        answer = await pushOne(last.scan, true, position(last.seq));
      } catch (error) {
        if (closed || !isPermanent(error)) throw error;
        probeDueAt = deps.clock.now().getTime() + PROBE_INTERVAL_MS;
        return false;
      }
      await hubAnswered();
      return rewindIfLost(last.seq, answer.hubSeq);
    };
    try {
      pass: for (;;) {
        const batch = await store.scans.changesSince(cursor, BATCH);
        if (batch.length === 0) {
          if (!closed && (await probe())) continue;
          break;
        }
        for (const { seq, scan } of batch) {
          // Shutdown (or a new link) stops the pass between two changes.
          if (closed) return { pushed, error: null };
          try {
            const { hubSeq } = await pushOne(scan, seq <= replayUntil, position(seq));
            pushed++;
            reached = Math.max(reached, seq);
            // the hub takes changes again, even with a backlog still to go
            if (pushed === 1) await hubAnswered();
            if (await rewindIfLost(seq, hubSeq)) continue pass;
          } catch (error) {
            if (closed || !isPermanent(error)) throw error;
            // Retrying cannot help, and would hold every later change back: skip, count it, and say so on the status line.
            skipped = `Scan ${scan.id} was not synced: ${(error as Error).message}`;
            await recordSkip(seq);
            await store.meta.set(META_LAST_ERROR, skipped);
            logger.warn({ err: error, scanId: scan.id }, 'scan skipped by sync');
          }
          cursor = seq;
          await store.meta.set(deps.cursorKey, String(seq));
        }
        if (pushed > 0) await store.meta.set(META_LAST_SYNC_AT, deps.clock.now().toISOString());
        await saveReached();
        await saveAcked();
      }
      return { pushed, error: null };
    } catch (error) {
      const message = (error as Error).message;
      // Stopped by close(): the cut-short upload is not the hub's failure, and resumes next start.
      if (closed) return { pushed, error: null };
      probeDueAt = 0; // the hub was away: ask for its mark as soon as it answers again
      await store.meta.set(META_LAST_ERROR, message).catch(() => undefined);
      logger.warn({ err: error }, 'sync to the hub failed; will retry');
      return { pushed, error: message };
    } finally {
      await saveReached().catch(() => undefined);
      await saveAcked().catch(() => undefined);
    }
  }

  function runPass(): Promise<PassResult> {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  }

  function schedule(ms: number): void {
    if (closed) return;
    if (timer !== null) timers.clear(timer);
    timer = timers.set(() => {
      timer = null;
      void tick();
    }, ms);
  }

  async function tick(): Promise<void> {
    if (closed) return;
    const result = await runPass();
    failures = result.error === null ? 0 : failures + 1;
    schedule(failures > 0 ? backoffDelay(failures, random) : IDLE_POLL_MS);
  }

  return {
    async runOnce() {
      if (closed) return { pushed: 0, error: null };
      // A pass in flight may have read its batch before the latest change: run a fresh one after it.
      if (running) await running;
      return runPass();
    },
    start() {
      schedule(0);
    },
    async close() {
      closed = true;
      if (timer !== null) timers.clear(timer);
      timer = null;
      await running;
    },
  };
}

/** Meta key of this computer's desk id, which it names itself by to every hub (desk-marks.ts). */
export const META_DESK_ID = 'sync.deskId';

/** This computer's desk id, made the first time it is needed. A copied data folder takes it along. */
export async function deskIdOf(meta: Pick<Store, 'meta'>['meta']): Promise<string> {
  const existing = await meta.get(META_DESK_ID);
  if (existing) return existing;
  const id = randomId();
  await meta.set(META_DESK_ID, id);
  return id;
}

class LocalImageMissing extends Error {
  constructor(scanId: string) {
    super(`the image of scan ${scanId} is missing on this computer`);
    this.name = 'LocalImageMissing';
  }
}

/** A refusal about this one scan, which sending it again cannot change. */
function isPermanent(error: unknown): boolean {
  if (error instanceof LocalImageMissing) return true;
  return error instanceof HubError && error.refusesScan;
}
