/**
 * The desktop's side of the wire to its hub. Every call has a timeout so a hub that
 * hangs cannot stall the pusher, and every failure becomes a HubError whose message
 * is fit for the sync status line (it never contains the API key).
 *
 * Only the hub's own JSON envelope counts as an answer: a 2xx that is not TireWear's
 * reply (a captive portal, a mistyped address landing on some other site) is a failure
 * like any other, and a refusal is about the pushed scan only when the hub says so
 * (refusesScan, hub-refusal.ts); what a proxy, a firewall or the hub's Host check answers is a
 * problem of the link, retried until it is fixed.
 */
import { DESK_ID_HEADER, DESK_SEQ_HEADER, HUB_DESK_SEQ_HEADER, readHubDeskSeq, type DeskPosition } from './desk-marks.js';
import type { HubScanList, WireShop } from '../../shared/api.js';
import type { HubLink } from '../config/schema.js';
import { HubError, isEnvelope, refusal, shapeError, unreachable } from './hub-refusal.js';
import type { SyncScan } from './wire.js';

export { HubError };

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export type { HubLink };

export interface PushAnswer {
  outcome: 'stored' | 'needs-image';
  /**
   * With a `position` sent: the highest change of this desk the hub had handled before this one
   * (its X-Hub-Desk-Seq, desk-marks.ts); null from a hub that keeps no such mark, and with `needs-image`.
   */
  hubSeq: number | null;
}

export interface HubClient {
  /**
   * Upsert one scan; resolves only when the hub acknowledged this scan in its own envelope.
   * `needs-image` when the hub has never seen the scan and no image was sent (the hub
   * answers 409 CONFLICT for that case only).
   */
  pushScan(scan: SyncScan, image: { data: Buffer; mime: string } | null, position?: DeskPosition): Promise<PushAnswer>;
  /**
   * One page of the hub account's scans (every shop of the chain, or the one whose key is
   * `apiKeyId`), newest first. A hub older than shop names sends no `shop`: read as null.
   */
  listScans(query: HubScanQuery): Promise<HubScanList>;
  /** The hub account's shops (its API keys). */
  listShops(): Promise<WireShop[]>;
  /** An image of a hub scan, for the chain view: JPEG, PNG or WebP only. */
  image(scanId: string, variant: 'original' | 'thumbnail'): Promise<{ mime: string; data: Buffer }>;
}

export interface HubScanQuery {
  cursor: string | null;
  limit?: number | undefined;
  apiKeyId?: string | undefined;
}

export interface HubClientOptions extends HubLink {
  fetch?: FetchLike;
  /** For reads the desk waits on; uploads get uploadTimeoutMs(), as a 10 MiB photo may crawl up a shop's line. */
  timeoutMs?: number;
  /** Aborts every call in flight (the link is closing). */
  signal?: AbortSignal;
  /** The desk's clock, the one its gauge readings are stamped with: sent with each upload (DESK_TIME_HEADER). */
  now?: () => Date;
}

/**
 * The desk's time when it sent an upload, so the hub can tell how far the desk's clock is off its
 * own and put the desk's reading times on its clock (receive.ts onHubClock).
 */
export const DESK_TIME_HEADER = 'X-Desk-Time';

export const READ_TIMEOUT_MS = 15_000;
export const UPLOAD_TIMEOUT_MS = 120_000;
/**
 * Uploads also get a second per this many bytes of photo (32 KiB/s, a quarter of a 1 Mbit/s
 * line): a 10 MiB photo then has ≈ 7 minutes, so a slow shop line is never cut off on every try
 * (which would hold every later change back), while a hub that has stopped answering still is.
 */
export const SLOWEST_UPLINK_BYTES_PER_S = 32 * 1024;

/** How long an upload of `bytes` of photo may take. */
export function uploadTimeoutMs(bytes: number): number {
  return UPLOAD_TIMEOUT_MS + Math.ceil((bytes / SLOWEST_UPLINK_BYTES_PER_S) * 1000);
}

/** What the chain view passes on to the window; anything else from a hub is refused. */
export const HUB_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/webp']);

export function createHubClient(options: HubClientOptions): HubClient {
  const root = `${options.hubUrl.replace(/\/+$/, '')}/api/v1`;
  const doFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const readTimeoutMs = options.timeoutMs ?? READ_TIMEOUT_MS;

  /** The body as JSON, or null when it is not JSON; a body cut short is the network's failure. */
  async function readJson(response: Response, timeoutMs: number): Promise<unknown> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw unreachable(error, timeoutMs);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  }

  /** The `data` of the hub's success envelope; anything else is a HubError. */
  async function call(path: string, init: RequestInit = {}, timeoutMs = readTimeoutMs): Promise<{ response: Response; data: unknown }> {
    const response = await send(path, init, timeoutMs);
    const body = await readJson(response, timeoutMs);
    if (response.ok) {
      if (isEnvelope(body) && body.success) return { response, data: body.data };
      throw shapeError(response);
    }
    throw refusal(response, body, root, options.hubUrl);
  }

  async function send(path: string, init: RequestInit, timeoutMs: number): Promise<Response> {
    try {
      return await doFetch(`${root}${path}`, {
        ...init,
        headers: { 'X-API-Key': options.hubApiKey, ...(init.headers as Record<string, string> | undefined) },
        // never followed: fetch would send the hub key (and a photo) on to whatever host a captive
        // portal or a wrong address names; a redirect is reported instead (refusal)
        redirect: 'manual',
        signal: options.signal ? AbortSignal.any([AbortSignal.timeout(timeoutMs), options.signal]) : AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw unreachable(error, timeoutMs);
    }
  }

  return {
    async pushScan(scan, image, position) {
      const form = new FormData();
      form.append('scan', JSON.stringify(scan));
      if (image) form.append('image', new Blob([new Uint8Array(image.data)], { type: image.mime }), 'image');
      const headers: Record<string, string> = {};
      if (options.now) headers[DESK_TIME_HEADER] = options.now().toISOString();
      if (position) Object.assign(headers, { [DESK_ID_HEADER]: position.deskId, [DESK_SEQ_HEADER]: String(position.seq) });
      let answer: { response: Response; data: unknown };
      try {
        answer = await call(`/sync/scans/${encodeURIComponent(scan.scanId)}`, { method: 'PUT', body: form, headers }, uploadTimeoutMs(image?.data.length ?? 0));
      } catch (error) {
        if (!image && error instanceof HubError && error.status === 409 && error.code === 'CONFLICT' && !error.refusesScan) {
          return { outcome: 'needs-image', hubSeq: null };
        }
        throw error;
      }
      // The hub answers with the scan it stored: an acknowledgement of another id (or none) is not one.
      const acknowledged = (answer.data as { scanId?: unknown } | null)?.scanId;
      if (acknowledged !== scan.scanId) throw shapeError(answer.response);
      return { outcome: 'stored', hubSeq: position ? readHubDeskSeq(answer.response.headers.get(HUB_DESK_SEQ_HEADER)) : null };
    },
    async listScans({ cursor, limit, apiKeyId }) {
      const query = new URLSearchParams();
      if (cursor) query.set('cursor', cursor);
      if (limit) query.set('limit', String(limit));
      if (apiKeyId) query.set('apiKeyId', apiKeyId);
      const { response, data } = await call(`/sync/scans${query.size ? `?${query}` : ''}`);
      const page = data as Partial<HubScanList> | null;
      if (!page || !Array.isArray(page.items) || (page.nextCursor !== null && typeof page.nextCursor !== 'string')) {
        throw shapeError(response);
      }
      return { nextCursor: page.nextCursor, items: page.items.map((scan) => ({ ...scan, shop: scan.shop ?? null })) };
    },
    async listShops() {
      const { response, data } = await call('/sync/shops');
      const items = (data as { items?: unknown } | null)?.items;
      if (!Array.isArray(items)) throw shapeError(response);
      return items as WireShop[];
    },
    async image(scanId, variant) {
      // The hub's own scan image route: the hub key's account owns every scan of the chain.
      const query = variant === 'thumbnail' ? '?variant=thumbnail' : '';
      const response = await send(`/scans/${encodeURIComponent(scanId)}/image${query}`, {}, readTimeoutMs);
      if (!response.ok) throw refusal(response, await readJson(response, readTimeoutMs), root, options.hubUrl);
      // Served from this computer's origin: only an image type may pass, never HTML or script.
      const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (!HUB_IMAGE_TYPES.has(type)) {
        await response.body?.cancel().catch(() => undefined);
        throw new HubError(
          `Hub answered ${response.status} with ${type || 'no content type'} instead of a JPEG, PNG or WebP image; check the hub address`,
          response.status,
        );
      }
      try {
        return { mime: type, data: Buffer.from(await response.arrayBuffer()) };
      } catch (error) {
        throw unreachable(error, readTimeoutMs);
      }
    },
  };
}
