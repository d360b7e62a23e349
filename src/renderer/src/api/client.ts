/**
 * Typed client for /api/v1. Same origin, cookie session; every call unwraps the
 * envelope and throws ApiError so pages only ever handle one error shape.
 */
import type {
  AccountData,
  AnalyzeData,
  ApiKeyList,
  CalibrationStatus,
  CaptureCheck,
  ConnectionInfo,
  CreatedApiKey,
  Credentials,
  Envelope,
  ErrorCode,
  HealthData,
  HubScanList,
  HubShopList,
  LinkBody,
  ListQuery,
  MeasurementBody,
  NewAccount,
  NewKeyBody,
  RedeemBody,
  RedeemData,
  ScanList,
  ScanOverlays,
  ScanPatchBody,
  SettingsData,
  SettingsPatch,
  SyncStatus,
  VehicleList,
  WireAccount,
  WirePosition,
  WireScan,
  WireWear,
} from '../../../shared/api';
import { isErrorCode } from '../../../shared/contract/error-codes';
import { excelCsvFormat } from '../../../shared/csv-format';

export const API_BASE = '/api/v1';

/** A failure as the app sees it: an error code of the contract, or one the client finds itself. */
export type ClientErrorCode = ErrorCode | 'NETWORK_ERROR' | 'BAD_RESPONSE';

export class ApiError extends Error {
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    readonly status: number,
    readonly headers: Headers | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Allowance as announced by the X-RateLimit-* headers of an analyze response. */
export interface RateLimitInfo {
  limit: number | null;
  remaining: number | null;
  resetAt: Date | null;
}

function unwrap<T>(status: number, text: string, headers: Headers | null): T {
  let body: Envelope<T> | null = null;
  try {
    body = JSON.parse(text) as Envelope<T>;
  } catch {
    body = null;
  }
  if (body && body.success === true) return body.data;
  if (body && body.success === false && body.error) {
    const { code, message } = body.error;
    // A newer server may send a code this build does not know: an unexpected answer, in the server's words.
    throw new ApiError(isErrorCode(code) ? code : 'BAD_RESPONSE', message, status, headers);
  }
  throw new ApiError('BAD_RESPONSE', `The service answered something unexpected (HTTP ${status}).`, status, headers);
}

const NETWORK_MESSAGE = 'Could not reach the TireWear service. Check that the app is running.';

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(API_BASE + path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('NETWORK_ERROR', NETWORK_MESSAGE, 0);
  }
  return unwrap<T>(response.status, await response.text(), response.headers);
}

function parseReset(raw: string | null): Date | null {
  if (!raw) return null;
  const n = Number(raw);
  // Epoch seconds, or an ISO date; both are seen in the wild.
  const date = Number.isFinite(n) ? new Date(n < 1e12 ? n * 1000 : n) : new Date(raw);
  return Number.isNaN(date.getTime()) ? null : date;
}

function numberOrNull(raw: string | null): number | null {
  if (raw === null || raw === '' || raw === 'unlimited') return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
}

export function rateLimitFrom(headers: Headers | null): RateLimitInfo | null {
  if (!headers || !headers.has('x-ratelimit-limit')) return null;
  return {
    limit: numberOrNull(headers.get('x-ratelimit-limit')),
    remaining: numberOrNull(headers.get('x-ratelimit-remaining')),
    resetAt: parseReset(headers.get('x-ratelimit-reset')),
  };
}

/** XMLHttpRequest headers → Headers, so analyze answers look like fetch answers. */
function xhrHeaders(xhr: XMLHttpRequest): Headers {
  const headers = new Headers();
  for (const line of xhr
    .getAllResponseHeaders()
    .trim()
    .split(/[\r\n]+/)) {
    const at = line.indexOf(':');
    if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return headers;
}

export interface AnalyzeOptions {
  vehicle?: string;
  position?: WirePosition | '';
  verbose?: boolean;
  /** Same key on a retry: the server then charges the scan once even if the first answer was lost. */
  idempotencyKey?: string;
  /** Fraction 0–1 of the upload sent. */
  onProgress?: (fraction: number) => void;
}

/** POST /analyze through XHR: fetch cannot report upload progress. */
export function analyze(image: Blob, filename: string, options: AnalyzeOptions = {}): Promise<{ data: AnalyzeData; rateLimit: RateLimitInfo | null }> {
  const form = new FormData();
  if (options.vehicle) form.append('vehicle', options.vehicle);
  if (options.position) form.append('position', options.position);
  if (options.verbose) form.append('verbose', '1');
  form.append('image', image, filename);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API_BASE}/analyze`);
    xhr.withCredentials = true;
    if (options.idempotencyKey) xhr.setRequestHeader('Idempotency-Key', options.idempotencyKey);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) options.onProgress?.(event.loaded / event.total);
    };
    xhr.onerror = () => reject(new ApiError('NETWORK_ERROR', NETWORK_MESSAGE, 0));
    xhr.onload = () => {
      const headers = xhrHeaders(xhr);
      try {
        const data = unwrap<AnalyzeData>(xhr.status, xhr.responseText, headers);
        resolve({ data, rateLimit: rateLimitFrom(headers) });
      } catch (error) {
        reject(error);
      }
    };
    xhr.send(form);
  });
}

/** GET /scans/:id/overlays: the verbose=1 extras of a stored scan, made again from its photo. */
export type { ScanOverlays };

/** PATCH /scans/:id: what a correction changes (at least one field; null clears). */
export type ScanCorrection = ScanPatchBody;

/** POST /analyze/check: is this webcam frame worth a scan? Free, nothing stored. */
async function checkFrame(image: Blob): Promise<CaptureCheck> {
  const form = new FormData();
  form.append('image', image, 'frame.jpg');
  let response: Response;
  try {
    response = await fetch(`${API_BASE}/analyze/check`, { method: 'POST', credentials: 'same-origin', body: form });
  } catch {
    throw new ApiError('NETWORK_ERROR', NETWORK_MESSAGE, 0);
  }
  return unwrap<CaptureCheck>(response.status, await response.text(), response.headers);
}

export interface ScanFilter {
  vehicle?: string;
  /** One vehicle exactly, by its plate key (src/shared/vehicle.ts). */
  vehicleKey?: string;
  /** false: only scans without a vehicle. */
  hasVehicle?: boolean;
  wear?: WireWear | '';
  /** yyyy-mm-dd, inclusive day bounds. */
  from?: string;
  to?: string;
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** As the query schema names them (ListQuery): a parameter renamed there is a compile error here. */
function filterParams(filter: ScanFilter): { [name in keyof ListQuery]?: string } {
  return {
    vehicle: filter.vehicle?.trim(),
    vehicleKey: filter.vehicleKey,
    hasVehicle: filter.hasVehicle === undefined ? undefined : String(filter.hasVehicle),
    wear: filter.wear || undefined,
    from: filter.from ? new Date(`${filter.from}T00:00:00`).toISOString() : undefined,
    to: filter.to ? new Date(`${filter.to}T23:59:59.999`).toISOString() : undefined,
  };
}

export const api = {
  health: () => request<HealthData>('GET', '/health'),
  register: (email: string, password: string) => request<WireAccount>('POST', '/auth/register', { email, password } satisfies NewAccount),
  login: (email: string, password: string) => request<WireAccount>('POST', '/auth/login', { email, password } satisfies Credentials),
  logout: () => request<unknown>('POST', '/auth/logout', {}),
  account: () => request<AccountData>('GET', '/account'),
  redeemLicense: (code: string) => request<RedeemData>('POST', '/licenses', { code } satisfies RedeemBody),
  listKeys: async () => (await request<ApiKeyList>('GET', '/keys')).items,
  createKey: (name: string) => request<CreatedApiKey>('POST', '/keys', { name } satisfies NewKeyBody),
  revokeKey: (id: string) => request<unknown>('DELETE', `/keys/${encodeURIComponent(id)}`),
  listScans: (filter: ScanFilter, cursor?: string, limit = 20) => request<ScanList>('GET', `/scans${query({ ...filterParams(filter), cursor, limit })}`),
  /** The history by vehicle: groups newest first, each with its newest scans. */
  listVehicles: (filter: ScanFilter, cursor?: string, limit = 20) =>
    request<VehicleList>('GET', `/vehicles${query({ ...filterParams(filter), cursor, limit })}`),
  /** A stored scan's overlays, made again from its photo (free, nothing stored), for the History's card. */
  scanOverlays: (id: string) => request<ScanOverlays>('GET', `/scans/${encodeURIComponent(id)}/overlays`),
  getScan: (id: string) => request<WireScan>('GET', `/scans/${encodeURIComponent(id)}`),
  deleteScan: (id: string) => request<unknown>('DELETE', `/scans/${encodeURIComponent(id)}`),
  /** A plate, position or gauge reading put right: free, and recorded in the scan's changes. */
  correctScan: (id: string, patch: ScanCorrection) => request<WireScan>('PATCH', `/scans/${encodeURIComponent(id)}`, patch),
  setMeasurement: (id: string, measurementMm: number | null) =>
    request<WireScan>('PUT', `/scans/${encodeURIComponent(id)}/measurement`, { measurementMm } satisfies MeasurementBody),
  /** For the shop's spreadsheet: Excel's own dialect for this computer's number format (src/shared/csv-format.ts). */
  exportUrl: (filter: ScanFilter, locale?: string) => `${API_BASE}/scans/export${query({ ...filterParams(filter), format: excelCsvFormat(locale) })}`,
  imageUrl: (id: string, variant: 'original' | 'thumbnail' = 'original') =>
    `${API_BASE}/scans/${encodeURIComponent(id)}/image${variant === 'thumbnail' ? '?variant=thumbnail' : ''}`,
  checkFrame,
  /** Where a POS can reach this server: loopback, and with LAN access this PC's addresses and name. */
  connection: () => request<ConnectionInfo>('GET', '/connection'),
  getSettings: () => request<SettingsData>('GET', '/settings'),
  putSettings: (patch: SettingsPatch) => request<SettingsData>('PUT', '/settings', patch),
  calibration: () => request<CalibrationStatus>('GET', '/calibration'),
  startCalibration: () => request<CalibrationStatus>('POST', '/calibration', {}),
  revertCalibration: () => request<CalibrationStatus>('DELETE', '/calibration'),
  syncStatus: () => request<SyncStatus>('GET', '/sync/status'),
  linkHub: (hubUrl: string, hubApiKey: string) => request<SyncStatus>('PUT', '/sync/link', { hubUrl, hubApiKey } satisfies LinkBody),
  unlinkHub: () => request<SyncStatus>('DELETE', '/sync/link'),
  syncNow: () => request<SyncStatus>('POST', '/sync/run', {}),
  resendSkipped: () => request<SyncStatus>('POST', '/sync/resend', {}),
  /** The chain's scans, read from the hub through this computer; image URLs point at the desk's proxy route. */
  hubScans: (cursor?: string, limit = 20, apiKeyId?: string) => request<HubScanList>('GET', `/sync/hub-scans${query({ cursor, limit, apiKeyId })}`),
  /** The chain's shops (the hub's API keys), for the shop filter; empty from a hub too old to list them. */
  hubShops: async () => (await request<HubShopList>('GET', '/sync/hub-shops')).items,
};
