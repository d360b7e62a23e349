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
import type { HubClient, PushAnswer } from './hub-client.js';
import { deskIdOf } from './push/desk-id.js';
import { PassMarks } from './push/marks.js';
import { isPermanent, pushScan } from './push/push-scan.js';
import { recordSkip } from './push/skipped.js';
import { backoffDelay, IDLE_POLL_MS, PROBE_INTERVAL_MS, realTimers, type Timers } from './push/timing.js';

export const META_LAST_SYNC_AT = 'sync.lastSyncAt';
export const META_LAST_ERROR = 'sync.lastError';
const BATCH = 25;

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

/** What one pass has done so far: changes pushed, and the last skip (which the status line keeps). */
interface PassRun {
  pushed: number;
  skipped: string | null;
}

export function createSyncPusher(deps: PusherDeps): SyncPusher {
  const { store, hub, logger } = deps;
  const timers = deps.timers ?? realTimers;
  const random = deps.random ?? Math.random;
  let closed = false;
  let failures = 0;
  let timer: unknown = null;
  let running: Promise<PassResult> | null = null;
  /** When an idle pass next asks the hub for its mark (probe); 0: at the next pass. */
  let probeDueAt = 0;
  /** This computer's desk id, read (or made) by the first pass. */
  let deskId: string | null = null;

  const position = (seq: number) => ({ deskId: deskId!, seq });
  const pushOne = (scan: ScanRecord, replay: boolean, seq: number) => pushScan(hub, deps.images, scan, replay, position(seq));
  const probeLater = () => {
    probeDueAt = deps.clock.now().getTime() + PROBE_INTERVAL_MS;
  };

  /** The hub answers again: the last failure on the status line is over (a skip of this pass stays). */
  async function hubAnswered(run: PassRun): Promise<void> {
    if (run.skipped !== null) return;
    await store.meta.set(META_LAST_ERROR, '');
    await store.meta.set(META_LAST_SYNC_AT, deps.clock.now().toISOString());
  }

  /**
   * PassMarks.rewindIfLost (false without an ackedKey: it checks), the hub having been asked for its
   * mark whatever it answered. Without an ackedKey the probe never runs, so its time is moot.
   */
  async function rewindIfLost(marks: PassMarks, seq: number, hubSeq: number | null): Promise<boolean> {
    // a hub that keeps no marks (an older version) is asked hourly, not every pass
    probeLater();
    return marks.rewindIfLost(seq, hubSeq, logger);
  }

  /**
   * Nothing to send: an idle desk asks the hub for its mark now and then (at start, after a
   * failed pass, else hourly) by sending its last acknowledged change again, without its photo.
   * True when that found the hub behind (rewindIfLost).
   */
  async function probe(marks: PassMarks, run: PassRun): Promise<boolean> {
    if (!deps.ackedKey || marks.acked === 0 || marks.rewound || deps.clock.now().getTime() < probeDueAt) return false;
    const [last] = await store.scans.changesSince(marks.acked - 1, 1);
    // that change was followed by one skipped since: sending either again proves nothing
    if (!last || last.seq !== marks.acked) {
      probeLater();
      return false;
    }
    let answer: PushAnswer;
    try {
      answer = await pushOne(last.scan, true, last.seq);
    } catch (error) {
      if (closed || !isPermanent(error)) throw error;
      probeLater();
      return false;
    }
    await hubAnswered(run);
    return rewindIfLost(marks, last.seq, answer.hubSeq);
  }

  /** Retrying cannot help, and would hold every later change back: skip, count it, and say so on the status line. */
  async function skip(scan: ScanRecord, seq: number, error: unknown, run: PassRun): Promise<void> {
    run.skipped = `Scan ${scan.id} was not synced: ${(error as Error).message}`;
    await recordSkip(store.meta, deps.skippedKey, seq);
    await store.meta.set(META_LAST_ERROR, run.skipped);
    logger.warn({ err: error, scanId: scan.id }, 'scan skipped by sync');
  }

  /** One change pushed (or skipped) and the cursor past it; true when the hub turned out behind and the pass starts again from its mark. */
  async function pushChange(seq: number, scan: ScanRecord, marks: PassMarks, run: PassRun): Promise<boolean> {
    try {
      const { hubSeq } = await pushOne(scan, seq <= marks.replayUntil, seq);
      run.pushed++;
      marks.reached = Math.max(marks.reached, seq);
      // the hub takes changes again, even with a backlog still to go
      if (run.pushed === 1) await hubAnswered(run);
      if (await rewindIfLost(marks, seq, hubSeq)) return true;
    } catch (error) {
      if (closed || !isPermanent(error)) throw error;
      await skip(scan, seq, error, run);
    }
    await marks.moveTo(seq);
    return false;
  }

  /** Batch after batch until nothing is pending (and the probe finds the hub where it should be), or close() stops it. */
  async function pushPending(marks: PassMarks, run: PassRun): Promise<void> {
    pass: for (;;) {
      const batch = await store.scans.changesSince(marks.cursor, BATCH);
      if (batch.length === 0) {
        if (!closed && (await probe(marks, run))) continue;
        return;
      }
      for (const { seq, scan } of batch) {
        // Shutdown (or a new link) stops the pass between two changes.
        if (closed) return;
        if (await pushChange(seq, scan, marks, run)) continue pass;
      }
      if (run.pushed > 0) await store.meta.set(META_LAST_SYNC_AT, deps.clock.now().toISOString());
      await marks.saveReached();
      await marks.saveAcked();
    }
  }

  async function pass(): Promise<PassResult> {
    const marks = await PassMarks.load(store.meta, deps);
    deskId ??= await deskIdOf(store.meta);
    const run: PassRun = { pushed: 0, skipped: null };
    try {
      await pushPending(marks, run);
      return { pushed: run.pushed, error: null };
    } catch (error) {
      const message = (error as Error).message;
      // Stopped by close(): the cut-short upload is not the hub's failure, and resumes next start.
      if (closed) return { pushed: run.pushed, error: null };
      probeDueAt = 0; // the hub was away: ask for its mark as soon as it answers again
      await store.meta.set(META_LAST_ERROR, message).catch(() => undefined);
      logger.warn({ err: error }, 'sync to the hub failed; will retry');
      return { pushed: run.pushed, error: message };
    } finally {
      await marks.saveReached().catch(() => undefined);
      await marks.saveAcked().catch(() => undefined);
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
