/**
 * The desktop's side of the wire to its hub. Every call has a timeout so a hub that
 * hangs cannot stall the pusher, and every failure becomes a HubError whose message
 * is fit for the sync status line (it never contains the API key).
 */
import type { HubScanList, WireShop } from '../../shared/api.js';
import type { SyncScan } from './wire.js';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface HubLink {
  hubUrl: string;
  hubApiKey: string;
}

export interface HubClient {
  /**
   * Upsert one scan. `needs-image` when the hub has never seen the scan and no image
   * was sent (the hub answers 409 CONFLICT for that case only).
   */
  pushScan(scan: SyncScan, image: { data: Buffer; mime: string } | null): Promise<'stored' | 'needs-image'>;
  /**
   * One page of the hub account's scans (every shop of the chain, or the one whose key is
   * `apiKeyId`), newest first. A hub older than shop names sends no `shop`: read as null.
   */
  listScans(query: HubScanQuery): Promise<HubScanList>;
  /** The hub account's shops (its API keys). */
  listShops(): Promise<WireShop[]>;
  /** An image of a hub scan, for the chain view. */
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
  ) {
    super(message);
    this.name = 'HubError';
  }
}

export interface HubClientOptions extends HubLink {
  fetch?: FetchLike;
  /** For reads the desk waits on; uploads get UPLOAD_TIMEOUT_MS, as a 10 MiB photo may crawl up a shop's line. */
  timeoutMs?: number;
  /** Aborts every call in flight (the link is closing). */
  signal?: AbortSignal;
}

export const READ_TIMEOUT_MS = 15_000;
export const UPLOAD_TIMEOUT_MS = 120_000;

export function createHubClient(options: HubClientOptions): HubClient {
  const root = `${options.hubUrl.replace(/\/+$/, '')}/api/v1`;
  const doFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const readTimeoutMs = options.timeoutMs ?? READ_TIMEOUT_MS;

  async function call(path: string, init: RequestInit = {}, timeoutMs = readTimeoutMs): Promise<Response> {
    let response: Response;
    try {
      response = await doFetch(`${root}${path}`, {
        ...init,
        headers: { 'X-API-Key': options.hubApiKey, ...(init.headers as Record<string, string> | undefined) },
        signal: options.signal ? AbortSignal.any([AbortSignal.timeout(timeoutMs), options.signal]) : AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : describe(error);
      throw new HubError(`Hub unreachable (${reason})`);
    }
    if (response.ok) return response;
    const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    const code = body?.error?.code ?? null;
    const detail = body?.error?.message ?? response.statusText;
    throw new HubError(`Hub answered ${response.status}${code ? ` ${code}` : ''}: ${detail}`, response.status, code);
  }

  return {
    async pushScan(scan, image) {
      const form = new FormData();
      form.append('scan', JSON.stringify(scan));
      if (image) form.append('image', new Blob([new Uint8Array(image.data)], { type: image.mime }), 'image');
      try {
        await call(`/sync/scans/${encodeURIComponent(scan.scanId)}`, { method: 'PUT', body: form }, UPLOAD_TIMEOUT_MS);
        return 'stored';
      } catch (error) {
        if (!image && error instanceof HubError && error.status === 409 && error.code === 'CONFLICT') {
          return 'needs-image';
        }
        throw error;
      }
    },
    async listScans({ cursor, limit, apiKeyId }) {
      const query = new URLSearchParams();
      if (cursor) query.set('cursor', cursor);
      if (limit) query.set('limit', String(limit));
      if (apiKeyId) query.set('apiKeyId', apiKeyId);
      const response = await call(`/sync/scans${query.size ? `?${query}` : ''}`);
      const body = (await response.json()) as { data: HubScanList };
      return { ...body.data, items: body.data.items.map((scan) => ({ ...scan, shop: scan.shop ?? null })) };
    },
    async listShops() {
      const response = await call('/sync/shops');
      return ((await response.json()) as { data: { items: WireShop[] } }).data.items;
    },
    async image(scanId, variant) {
      // The hub's own scan image route: the hub key's account owns every scan of the chain.
      const query = variant === 'thumbnail' ? '?variant=thumbnail' : '';
      const response = await call(`/scans/${encodeURIComponent(scanId)}/image${query}`);
      return {
        mime: response.headers.get('content-type') ?? 'application/octet-stream',
        data: Buffer.from(await response.arrayBuffer()),
      };
    },
  };
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
