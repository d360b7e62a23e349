/**
 * Sync on the shop's desktop: the hub link (from config at start, changed at run time
 * from the settings screen), the pusher that runs while linked, the status line, and
 * the chain's scans read back from the hub (hub-reads.ts). What is kept per link: link-state.ts.
 */
import type { HubScanList, SyncStatus, WireShop } from '../../shared/api.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { validateLink } from '../config/hub-link.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import { createHubClient, type FetchLike, type HubClient, type HubLink, type HubScanQuery } from './hub-client.js';
import { hubImage, hubScans, hubShops } from './hub-reads.js';
import { ackedKeyOf, cursorKeyOf, reachedKeyOf, replayKeyOf, replaySkipped, skippedKeyOf } from './link-state.js';
import { readSkipped } from './push/skipped.js';
import type { Timers } from './push/timing.js';
import { createSyncPusher, META_LAST_ERROR, META_LAST_SYNC_AT, type SyncPusher } from './pusher.js';

/** Counting further than this would read the whole outbox for a number nobody needs exactly. */
export const PENDING_COUNT_CAP = 10_000;
/** Linking waits this long for the hub to confirm the key; the link is kept either way. */
const PROBE_TIMEOUT_MS = 10_000;
/** "Sync now" answers with the status so far after this long; the pass carries on in the background. */
export const RUN_WAIT_MS = 15_000;

export interface SyncServiceDeps {
  link: HubLink | null;
  store: Pick<Store, 'scans' | 'meta'>;
  images: ImageStore;
  clock: Clock;
  logger: Logger;
  /** Persist the link (settings.json `sync`), null to remove it. */
  saveLink(link: HubLink | null): Promise<void>;
  fetch?: FetchLike;
  timers?: Timers;
  random?: () => number;
  /** RUN_WAIT_MS unless given (tests). */
  runWaitMs?: number;
}

export interface SyncService {
  status(): Promise<SyncStatus>;
  /**
   * VALIDATION_ERROR for a URL that is not http(s) or a malformed key. Linking again with
   * the hub and key of an earlier link resumes its cursor and sends the changes it skipped again.
   */
  link(link: HubLink): Promise<SyncStatus>;
  /**
   * Send the changes the hub refused again (once their cause is fixed, on the hub or here): what
   * linking again with the same hub and key does, without the key typed again (the window never
   * sees it). VALIDATION_ERROR when unlinked.
   */
  resendSkipped(): Promise<SyncStatus>;
  unlink(): Promise<SyncStatus>;
  /**
   * "Sync now": a pass over everything pending, answered with the status once it is done or
   * after RUN_WAIT_MS, whichever comes first (the pass goes on). VALIDATION_ERROR when unlinked.
   */
  runNow(): Promise<SyncStatus>;
  /**
   * One page of the chain's scans from the hub (one shop's with `apiKeyId`); image URLs point
   * at hubImage's route. NOT_FOUND when the hub has no such shop.
   */
  hubScans(query: HubScanQuery): Promise<HubScanList>;
  /** The chain's shops; none from a hub too old to list them, so the window offers no filter. */
  hubShops(): Promise<WireShop[]>;
  hubImage(scanId: string, variant: 'original' | 'thumbnail'): Promise<{ mime: string; data: Buffer }>;
  /** The running pusher (tests drive it with runOnce). */
  readonly pusher: SyncPusher | null;
  /**
   * Shutdown has begun: stop the pusher between two changes and cut an upload or probe in flight
   * short, keeping the link for the status; nothing starts again. close() still follows.
   */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export function createSyncService(deps: SyncServiceDeps): SyncService {
  let current: { link: HubLink; hub: HubClient; pusher: SyncPusher; stop: AbortController } | null = null;
  /** Aborted when shutdown begins: the link probe and whatever the pushers have in flight. */
  const shutdown = new AbortController();

  function connect(link: HubLink): void {
    const stop = new AbortController();
    const hub = createHubClient({ ...link, signal: stop.signal, now: () => deps.clock.now(), ...(deps.fetch ? { fetch: deps.fetch } : {}) });
    const pusher = createSyncPusher({
      store: deps.store,
      images: deps.images,
      hub,
      clock: deps.clock,
      logger: deps.logger,
      cursorKey: cursorKeyOf(link),
      skippedKey: skippedKeyOf(link),
      replayKey: replayKeyOf(link),
      reachedKey: reachedKeyOf(link),
      ackedKey: ackedKeyOf(link),
      ...(deps.timers ? { timers: deps.timers } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    });
    current = { link, hub, pusher, stop };
    if (shutdown.signal.aborted) void pusher.close();
    else pusher.start();
  }

  /** Stops the pusher, cutting an upload in flight short: quitting the app must not wait on the hub. */
  async function disconnect(): Promise<void> {
    const previous = current;
    current = null;
    if (!previous) return;
    const closed = previous.pusher.close();
    previous.stop.abort();
    await closed;
  }

  function linked(): { link: HubLink; hub: HubClient; pusher: SyncPusher } {
    if (!current) throw new AppError('VALIDATION_ERROR', 'This computer is not linked to a hub; link it in Settings first');
    return current;
  }

  async function status(): Promise<SyncStatus> {
    if (!current) return { linked: false, hubUrl: null, lastSyncAt: null, pending: 0, lastError: null, skipped: 0 };
    const { link } = current;
    const cursor = Number((await deps.store.meta.get(cursorKeyOf(link))) ?? 0);
    // counted, not read: the status is polled every few seconds while scans are analysed
    const pending = await deps.store.scans.countChangesSince(cursor, PENDING_COUNT_CAP);
    return {
      linked: true,
      hubUrl: link.hubUrl,
      lastSyncAt: (await deps.store.meta.get(META_LAST_SYNC_AT)) || null,
      pending,
      lastError: (await deps.store.meta.get(META_LAST_ERROR)) || null,
      skipped: readSkipped(await deps.store.meta.get(skippedKeyOf(link))).count,
    };
  }

  /** Tell the shop at once whether the hub accepts the key, instead of at the first scan. */
  async function probe(link: HubLink): Promise<void> {
    const client = createHubClient({
      ...link,
      timeoutMs: PROBE_TIMEOUT_MS,
      signal: shutdown.signal,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    if (shutdown.signal.aborted) return;
    try {
      await client.listScans({ cursor: null });
    } catch (error) {
      // Cut short by shutdown: that says nothing about the hub.
      if (!shutdown.signal.aborted) await deps.store.meta.set(META_LAST_ERROR, (error as Error).message);
    }
  }

  /** One link change at a time, so two quick saves cannot leave two pushers running. */
  let changing: Promise<unknown> = Promise.resolve();
  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = changing.then(work);
    changing = next.catch(() => undefined);
    return next;
  }

  if (deps.link) connect(deps.link);

  function linkTo(input: HubLink): Promise<SyncStatus> {
    const link = validateLink(input);
    return serialized(async () => {
      await deps.saveLink(link);
      const sameHub = current !== null && cursorKeyOf(current.link) === cursorKeyOf(link);
      await disconnect();
      await deps.store.meta.set(META_LAST_ERROR, '');
      // The last sync of another hub or account says nothing about this one.
      if (!sameHub) await deps.store.meta.set(META_LAST_SYNC_AT, '');
      await replaySkipped(deps.store.meta, deps.logger, link);
      await probe(link);
      connect(link);
      return status();
    });
  }

  return {
    status,
    link: linkTo,
    async resendSkipped() {
      return linkTo(linked().link);
    },
    unlink() {
      return serialized(async () => {
        await deps.saveLink(null);
        await disconnect();
        return status();
      });
    },
    // async: unlinked is a rejection, as every other answer of the service
    hubScans: async (query) => hubScans(linked().hub, query),
    hubShops: async () => hubShops(linked().hub),
    hubImage: async (scanId, variant) => hubImage(linked().hub, scanId, variant),
    async runNow() {
      const { pusher } = linked();
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deps.runWaitMs ?? RUN_WAIT_MS);
        timer.unref();
      });
      try {
        await Promise.race([pusher.runOnce(), waited]);
      } finally {
        clearTimeout(timer);
      }
      return status();
    },
    get pusher() {
      return current?.pusher ?? null;
    },
    async stop() {
      shutdown.abort();
      const running = current;
      if (!running) return;
      const closed = running.pusher.close();
      running.stop.abort();
      await closed;
    },
    close: () => serialized(disconnect),
  };
}
