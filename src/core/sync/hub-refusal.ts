/**
 * What the hub's answers mean to the desk: the HubError every failure becomes, with a message fit
 * for the sync status line, and whether a refusal is about the pushed scan (retried otherwise).
 */
import { SCAN_REFUSAL_HEADER } from './wire.js';

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

const NOT_TIREWEAR = "not with TireWear's reply";

/** Error codes a hub gives only about the image it was sent. */
const IMAGE_CODES = new Set(['IMAGE_UNREADABLE', 'IMAGE_TOO_SMALL', 'IMAGE_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'FILE_TOO_LARGE']);

interface Envelope {
  success: boolean;
  data?: unknown;
  error?: { code: string; message: string };
}

export function isEnvelope(value: unknown): value is Envelope {
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

export function unreachable(error: unknown, timeoutMs: number): HubError {
  const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${Math.round(timeoutMs / 1000)} s` : describe(error);
  return new HubError(`Hub unreachable (${reason})`);
}

/** A HubError for an answer that is not the hub's success envelope; `root` is the hub's API address. */
export function refusal(response: Response, body: unknown, root: string, hubUrl: string): HubError {
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
    detail += ` (the hub's TIREWEAR_ALLOWED_HOSTS must include ${hostOf(hubUrl)})`;
  }
  const marked = response.headers.get(SCAN_REFUSAL_HEADER) !== null;
  return new HubError(`Hub answered ${status} ${code}: ${detail}`, status, code, refusesScan(code, message, marked));
}

export function shapeError(response: Response): HubError {
  return new HubError(`Hub answered ${response.status} but ${NOT_TIREWEAR}; check the hub address`, response.status);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
