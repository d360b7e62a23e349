/**
 * The desktop's side of the wire to its hub. Every call has a timeout so a hub that
 * hangs cannot stall the pusher, and every failure becomes a HubError whose message
 * is fit for the sync status line (it never contains the API key).
 *
 * Only the hub's own JSON envelope counts as an answer: a 2xx that is not TireWear's
 * reply (a captive portal, a mistyped address landing on some other site) is a failure
 * like any other, and a refusal is about the pushed scan only when the hub says so
 * (refusesScan below); what a proxy, a firewall or the hub's Host check answers is a
 * problem of the link, retried until it is fixed.
 */
import { DESK_ID_HEADER, DESK_SEQ_HEADER, HUB_DESK_SEQ_HEADER, readHubDeskSeq, type DeskPosition } from './desk-marks.js';
import type { HubScanList, WireShop } from '../../shared/api.js';
import type { HubLink } from '../config/schema.js';
import { SCAN_REFUSAL_HEADER, type SyncScan } from './wire.js';

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

export class HubError extends Error {
  constructor(
    message: string,
    /** HTTP status when the hub answered, null when it could not be reached. */
    readonly status: number | null = null,
    /** The hub's error code when it answered with an envelope. */
    readonly code: string | null = null,
    /**
     * The hub refused this scan itself (its photo, its data, its owner): sending it again
     * cannot help. False for everything else, which is retried.
     */
    readonly refusesScan = false,
  ) {
    super(message);
    this.name = 'HubError';
  }
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

const NOT_TIREWEAR = "not with TireWear's reply";

/** Error codes a hub gives only about the image it was sent. */
const IMAGE_CODES = new Set(['IMAGE_UNREADABLE', 'IMAGE_TOO_SMALL', 'IMAGE_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'FILE_TOO_LARGE']);

interface Envelope {
  success: boolean;
  data?: unknown;
  error?: { code: string; message: string };
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const { success, error } = value as Record<string, unknown>;
  if (success === true) return 'data' in value;
  if (success !== false || typeof error !== 'object' || error === null) return false;
  const { code, message } = error as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string';
}

/**
 * Whether a refusal in the hub's envelope is about the pushed scan. A hub marks those with
 * SCAN_REFUSAL_HEADER; for a hub from before the mark, the codes and messages receive.ts
 * and parseSyncScan give about a scan. A bare status never is: a 403 also comes from the
 * Host allow-list or a firewall, a 413 from a proxy's body limit, a 400 from a proxy.
 */
export function refusesScan(code: string, message: string, marked: boolean): boolean {
  if (marked) return true;
  if (IMAGE_CODES.has(code)) return true;
  if (code === 'FORBIDDEN') return /belongs to another account/.test(message);
  if (code === 'VALIDATION_ERROR') {
    return /^scan[.:\s]|^The image does not match scan\.|^The scan field must be JSON/.test(message);
  }
  return false;
}

/** A line for the status about a refusal that did not come in the hub's envelope. */
function explainForeign(status: number): string {
  if (status === 413) {
    return 'a proxy in front of the hub refuses uploads this large (nginx: client_max_body_size 11m, see HUB.md)';
  }
  if (status === 401 || status === 403 || status === 407) {
    return 'a proxy, firewall or network rule between this computer and the hub refused the request';
  }
  if (status === 404) return 'no TireWear hub answers at this address; check the hub address';
  if (status >= 500) return 'the hub, or a proxy in front of it, is not working right now';
  return 'something other than a TireWear hub answered; check the hub address and any proxy in front of it';
}

/** Where a redirect points, as an address a person can check (scheme, host and path; no query), at most 200 characters. */
function describeLocation(location: string, base: string): string {
  try {
    const url = new URL(location, base);
    return `${url.origin}${url.pathname}`.slice(0, 200);
  } catch {
    return 'an address that is not one';
  }
}

function hostOf(hubUrl: string): string {
  try {
    return new URL(hubUrl).hostname;
  } catch {
    return hubUrl;
  }
}

export function createHubClient(options: HubClientOptions): HubClient {
  const root = `${options.hubUrl.replace(/\/+$/, '')}/api/v1`;
  const doFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const readTimeoutMs = options.timeoutMs ?? READ_TIMEOUT_MS;

  function unreachable(error: unknown, timeoutMs: number): HubError {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${Math.round(timeoutMs / 1000)} s` : describe(error);
    return new HubError(`Hub unreachable (${reason})`);
  }

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
    throw refusal(response, body);
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

  function refusal(response: Response, body: unknown): HubError {
    const status = response.status;
    if (status >= 300 && status < 400) {
      const location = response.headers.get('location');
      const where = location ? ` to ${describeLocation(location, root)}` : '';
      return new HubError(
        `Hub answered ${status}, a redirect${where}: the key is not sent on to another address; ` +
          'if the hub has moved, link with its new address (a captive portal or a wrong address redirects too)',
        status,
      );
    }
    if (!isEnvelope(body) || body.success || !body.error) {
      const statusText = response.statusText ? ` ${response.statusText}` : '';
      return new HubError(`Hub answered ${status}${statusText}, ${NOT_TIREWEAR}: ${explainForeign(status)}`, status);
    }
    const { code, message } = body.error;
    let detail = message;
    if (code === 'FORBIDDEN' && /Host header/.test(message)) {
      detail += ` (the hub's TIREWEAR_ALLOWED_HOSTS must include ${hostOf(options.hubUrl)})`;
    }
    const marked = response.headers.get(SCAN_REFUSAL_HEADER) !== null;
    return new HubError(`Hub answered ${status} ${code}: ${detail}`, status, code, refusesScan(code, message, marked));
  }

  function shapeError(response: Response): HubError {
    return new HubError(`Hub answered ${response.status} but ${NOT_TIREWEAR}; check the hub address`, response.status);
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
      if (!response.ok) throw refusal(response, await readJson(response, readTimeoutMs));
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

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
