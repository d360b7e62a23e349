/**
 * Sync on the shop's desktop: the hub link (from config at start, changed at run time
 * from the settings screen), the pusher that runs while linked, the status line, and
 * the chain's scans read back from the hub.
 */
import type { HubScanList, SyncStatus, WireShop } from '../../shared/api.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { validateLink } from '../config/hub-link.js';
import { sha256Hex } from '../services/support/ids.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import { createHubClient, HubError, type FetchLike, type HubClient, type HubLink, type HubScanQuery } from './hub-client.js';
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

function linkId(link: HubLink): string {
  return sha256Hex(`${link.hubUrl}\n${link.hubApiKey}`).slice(0, 16);
}

/** Per hub and key: linking elsewhere pushes everything again; re-linking the same resumes. */
export function cursorKeyOf(link: HubLink): string {
  return `sync.cursor.${linkId(link)}`;
}

/** The link's skipped changes (push/skipped.ts SkippedState). */
export function skippedKeyOf(link: HubLink): string {
  return `sync.skipped.${linkId(link)}`;
}

/** Up to which seq a replay of skipped changes goes over changes already handled once. */
export function replayKeyOf(link: HubLink): string {
  return `sync.replay.${linkId(link)}`;
}

/** The highest change of this link the hub answered for with its mark (PusherDeps.ackedKey). */
export function ackedKeyOf(link: HubLink): string {
  return `sync.acked.${linkId(link)}`;
}

/** Per hub address, whatever the key: the highest seq that hub acknowledged (PusherDeps.reachedKey). */
export function reachedKeyOf(link: HubLink): string {
  return `sync.reached.${sha256Hex(link.hubUrl).slice(0, 16)}`;
}

export const HUB_IMAGE_PATH = '/api/v1/sync/hub-scans';

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

  /**
   * Linking again with the same hub and key: send the changes that link skipped again, by
   * going back to the first of them. The changes after it that the hub already acknowledged
   * go again too, without their photo (the hub absorbs them; replayKeyOf).
   */
  async function replaySkipped(link: HubLink): Promise<void> {
    const skipped = readSkipped(await deps.store.meta.get(skippedKeyOf(link)));
    if (skipped.count === 0) return;
    const cursor = Number((await deps.store.meta.get(cursorKeyOf(link))) ?? 0);
    const replayUntil = Number((await deps.store.meta.get(replayKeyOf(link))) || 0);
    await deps.store.meta.set(replayKeyOf(link), String(Math.max(replayUntil, cursor)));
    await deps.store.meta.set(cursorKeyOf(link), String(Math.max(0, Math.min(cursor, skipped.fromSeq - 1))));
    await deps.store.meta.set(skippedKeyOf(link), '');
    deps.logger.info({ skipped: skipped.count }, 'sending the changes skipped by sync again');
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
      await replaySkipped(link);
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
    async hubScans(query) {
      const page = await call(() => linked().hub.listScans(query), 'The hub has no such shop');
      return {
        nextCursor: page.nextCursor,
        items: page.items.map((scan) => {
          const url = `${HUB_IMAGE_PATH}/${encodeURIComponent(scan.scanId)}/image`;
          return { ...scan, image: { ...scan.image, url, thumbnailUrl: `${url}?variant=thumbnail` } };
        }),
      };
    },
    hubShops() {
      return call(async () => {
        try {
          return await linked().hub.listShops();
        } catch (error) {
          // A hub from before shop names has no such route: no shops, so the window offers no filter.
          if (isHubNotFound(error)) return [];
          throw error;
        }
      }, 'The hub has no shop list');
    },
    hubImage(scanId, variant) {
      return call(() => linked().hub.image(scanId, variant), 'The hub has no such scan');
    },
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

/** The hub's own 404: one from whatever else answers at the address is no answer about the scan. */
function isHubNotFound(error: unknown): boolean {
  return error instanceof HubError && error.status === 404 && error.code === 'NOT_FOUND';
}

/** The hub's trouble, told to the desk as a 503 (or the hub's 404, as `notFound`) without pretending it is ours. */
async function call<T>(work: () => Promise<T>, notFound: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof HubError)) throw error;
    if (isHubNotFound(error)) throw new AppError('NOT_FOUND', notFound);
    throw new AppError('STORAGE_UNAVAILABLE', `The hub could not be read: ${error.message}`, { cause: error });
  }
}
