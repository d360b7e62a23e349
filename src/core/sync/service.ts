/**
 * Sync on the shop's desktop: the hub link (from config at start, changed at run time
 * from the settings screen), the pusher that runs while linked, the status line, and
 * the chain's scans read back from the hub.
 */
import type { HubScanList, SyncStatus, WireShop } from '../../shared/api.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { API_KEY_SHAPE } from '../services/auth.js';
import { sha256Hex } from '../services/ids.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import {
  createHubClient,
  HubError,
  type FetchLike,
  type HubClient,
  type HubLink,
  type HubScanQuery,
} from './hub-client.js';
import { createSyncPusher, META_LAST_ERROR, META_LAST_SYNC_AT, type SyncPusher, type Timers } from './pusher.js';

/** Counting further than this would read the whole outbox for a number nobody needs exactly. */
export const PENDING_COUNT_CAP = 10_000;
/** Linking waits this long for the hub to confirm the key; the link is kept either way. */
const PROBE_TIMEOUT_MS = 10_000;

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
}

export interface SyncService {
  status(): Promise<SyncStatus>;
  /** VALIDATION_ERROR for a URL that is not http(s) or a malformed key. */
  link(link: HubLink): Promise<SyncStatus>;
  unlink(): Promise<SyncStatus>;
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
  close(): Promise<void>;
}

export function validateLink(input: HubLink): HubLink {
  let url: URL;
  try {
    url = new URL(input.hubUrl.trim());
  } catch {
    throw new AppError('VALIDATION_ERROR', 'hubUrl must be a full URL such as https://hub.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('VALIDATION_ERROR', 'hubUrl must start with http:// or https://');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new AppError('VALIDATION_ERROR', 'hubUrl must not contain a user name, password, query or fragment');
  }
  if (!API_KEY_SHAPE.test(input.hubApiKey)) {
    throw new AppError('VALIDATION_ERROR', 'hubApiKey must be an API key of the hub: tw_ followed by 32 letters or digits');
  }
  return { hubUrl: url.toString().replace(/\/+$/, ''), hubApiKey: input.hubApiKey };
}

/** Per hub and key: linking elsewhere pushes everything again; re-linking the same resumes. */
export function cursorKeyOf(link: HubLink): string {
  return `sync.cursor.${sha256Hex(`${link.hubUrl}\n${link.hubApiKey}`).slice(0, 16)}`;
}

export const HUB_IMAGE_PATH = '/api/v1/sync/hub-scans';

export function createSyncService(deps: SyncServiceDeps): SyncService {
  let current: { link: HubLink; hub: HubClient; pusher: SyncPusher; stop: AbortController } | null = null;

  function connect(link: HubLink): void {
    const stop = new AbortController();
    const hub = createHubClient({ ...link, signal: stop.signal, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
    const pusher = createSyncPusher({
      store: deps.store,
      images: deps.images,
      hub,
      clock: deps.clock,
      logger: deps.logger,
      cursorKey: cursorKeyOf(link),
      ...(deps.timers ? { timers: deps.timers } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    });
    current = { link, hub, pusher, stop };
    pusher.start();
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

  function linked(): { link: HubLink; hub: HubClient } {
    if (!current) throw new AppError('VALIDATION_ERROR', 'This computer is not linked to a hub; link it in Settings first');
    return current;
  }

  async function status(): Promise<SyncStatus> {
    if (!current) return { linked: false, hubUrl: null, lastSyncAt: null, pending: 0, lastError: null };
    const cursor = Number((await deps.store.meta.get(cursorKeyOf(current.link))) ?? 0);
    const pending = await deps.store.scans.changesSince(cursor, PENDING_COUNT_CAP);
    return {
      linked: true,
      hubUrl: current.link.hubUrl,
      lastSyncAt: (await deps.store.meta.get(META_LAST_SYNC_AT)) || null,
      pending: pending.length,
      lastError: (await deps.store.meta.get(META_LAST_ERROR)) || null,
    };
  }

  /** Tell the shop at once whether the hub accepts the key, instead of at the first scan. */
  async function probe(link: HubLink): Promise<void> {
    const client = createHubClient({ ...link, timeoutMs: PROBE_TIMEOUT_MS, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
    try {
      await client.listScans({ cursor: null });
    } catch (error) {
      await deps.store.meta.set(META_LAST_ERROR, (error as Error).message);
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

  return {
    status,
    link(input) {
      const link = validateLink(input);
      return serialized(async () => {
        await deps.saveLink(link);
        const sameHub = current !== null && cursorKeyOf(current.link) === cursorKeyOf(link);
        await disconnect();
        await deps.store.meta.set(META_LAST_ERROR, '');
        // The last sync of another hub or account says nothing about this one.
        if (!sameHub) await deps.store.meta.set(META_LAST_SYNC_AT, '');
        await probe(link);
        connect(link);
        return status();
      });
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
          if (error instanceof HubError && error.status === 404) return [];
          throw error;
        }
      }, 'The hub has no shop list');
    },
    hubImage(scanId, variant) {
      return call(() => linked().hub.image(scanId, variant), 'The hub has no such scan');
    },
    get pusher() {
      return current?.pusher ?? null;
    },
    close: () => serialized(disconnect),
  };
}

/** The hub's trouble, told to the desk as a 503 (or the hub's 404, as `notFound`) without pretending it is ours. */
async function call<T>(work: () => Promise<T>, notFound: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof HubError)) throw error;
    if (error.status === 404) throw new AppError('NOT_FOUND', notFound);
    throw new AppError('STORAGE_UNAVAILABLE', `The hub could not be read: ${error.message}`, { cause: error });
  }
}
