/**
 * Error responses per operation in the OpenAPI document (issue 42): each operation lists the
 * statuses it can answer with and, for each, the error codes (an `enum` on `error.code`, and the
 * description naming them), so a generated client knows what to handle where. What every route can
 * answer (the Host check, a bad body, storage trouble) is derived from the operation itself (its
 * security, parameters and body); what only some routes answer is named in ROUTE_ERRORS. The broad
 * 4XX / 5XX responses stay beside them for anything else (an oversized header, a timed-out upload).
 */
import { ERROR_STATUS, type ErrorCode } from '../errors.js';

/** One line per code, as docs/API.md §3 says when each is answered. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'the request is malformed (the message names the field or parameter)',
  INVALID_API_KEY: 'the API key is malformed, unknown or revoked, or sent in another header than X-API-Key',
  INVALID_SESSION: 'no credentials where an account is needed, or the session cookie is unknown or expired',
  INVALID_CREDENTIALS: 'wrong email or password',
  FORBIDDEN: "not yours (another account's or shop's), not with an API key, not from the LAN, or a foreign Host / Origin",
  NOT_FOUND: 'no such item',
  METHOD_NOT_ALLOWED: 'known route, wrong method',
  CONFLICT: 'conflicts with the current state (the message says how)',
  FILE_TOO_LARGE: 'image over 10 MiB, JSON body over 64 KiB',
  UNSUPPORTED_MEDIA_TYPE: 'not JPEG, PNG or WebP by content, or not the content type this route takes',
  IMAGE_UNREADABLE: 'the image cannot be decoded (truncated or corrupt)',
  IMAGE_TOO_SMALL: 'under 256 px on the short side',
  IMAGE_TOO_LARGE: 'over 40 megapixels, or too costly to decode',
  NO_TIRE_DETECTED: 'the photo shows no tire tread (not charged)',
  TREAD_NOT_VISIBLE: 'a tire is in the photo but its tread cannot be read: a side view, a whole car, too far, blurred or dark (not charged)',
  LICENSE_INVALID: 'malformed, forged or foreign license code',
  LICENSE_EXPIRED: 'pro code past its date',
  LICENSE_ALREADY_REDEEMED: 'that code was redeemed before',
  IDEMPOTENCY_KEY_REUSED: 'the same Idempotency-Key with a different image or field',
  RATE_LIMIT_EXCEEDED: 'the scan allowance is used up (Retry-After)',
  TOO_MANY_ATTEMPTS: 'too many attempts from this caller (Retry-After)',
  INTERNAL_ERROR: 'a bug (the message shows no internals)',
  SERVER_BUSY: 'busy or shutting down (Retry-After)',
  MODEL_UNAVAILABLE: 'the tread models could not be loaded',
  STORAGE_UNAVAILABLE: 'the database or disk is unavailable',
};

const IMAGE_CHECKS: ErrorCode[] = ['FILE_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'IMAGE_UNREADABLE', 'IMAGE_TOO_SMALL', 'IMAGE_TOO_LARGE'];

/** What only these operations answer, beside what every operation of their kind does (commonErrors). */
export const ROUTE_ERRORS: Record<string, ErrorCode[]> = {
  'POST /api/v1/auth/register': ['CONFLICT', 'TOO_MANY_ATTEMPTS'],
  'POST /api/v1/auth/login': ['INVALID_CREDENTIALS', 'TOO_MANY_ATTEMPTS'],
  'GET /api/v1/account': ['NOT_FOUND'],
  'POST /api/v1/licenses': ['LICENSE_INVALID', 'LICENSE_EXPIRED', 'LICENSE_ALREADY_REDEEMED', 'CONFLICT', 'NOT_FOUND'],
  'POST /api/v1/analyze': [
    ...IMAGE_CHECKS,
    'NO_TIRE_DETECTED',
    'TREAD_NOT_VISIBLE',
    'IDEMPOTENCY_KEY_REUSED',
    'CONFLICT',
    'RATE_LIMIT_EXCEEDED',
    'MODEL_UNAVAILABLE',
  ],
  'POST /api/v1/analyze/check': [...IMAGE_CHECKS, 'TOO_MANY_ATTEMPTS'],
  // the stored photo analysed again: the models in use may refuse it; no upload, so no 413/415
  'GET /api/v1/scans/{scanId}/overlays': ['NO_TIRE_DETECTED', 'TREAD_NOT_VISIBLE', 'IMAGE_UNREADABLE', 'TOO_MANY_ATTEMPTS', 'MODEL_UNAVAILABLE'],
  'GET /api/v1/calibration': [],
  'POST /api/v1/calibration': ['CONFLICT', 'MODEL_UNAVAILABLE'],
  'PUT /api/v1/sync/scans/{scanId}': [...IMAGE_CHECKS, 'CONFLICT'],
  'PUT /api/v1/sync/link': ['CONFLICT'],
  'GET /api/v1/sync/hub-scans': ['INVALID_API_KEY', 'NOT_FOUND'],
  'GET /api/v1/sync/hub-shops': ['INVALID_API_KEY', 'NOT_FOUND'],
  'GET /api/v1/sync/hub-scans/{scanId}/image': ['INVALID_API_KEY'],
  'POST /api/v1/sync/run': ['CONFLICT'],
  'POST /api/v1/sync/resend': ['CONFLICT'],
};

interface OperationShape {
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ in?: string }>;
  requestBody?: unknown;
}

/** What every operation of this shape can answer: the security hooks, the body parser, the store. */
export function commonErrors(method: string, path: string, op: OperationShape): ErrorCode[] {
  const codes: ErrorCode[] = ['VALIDATION_ERROR', 'FORBIDDEN', 'INTERNAL_ERROR', 'SERVER_BUSY'];
  const open = path === '/api/v1/health' || path === '/api/v1/openapi.json';
  if (!open) codes.push('STORAGE_UNAVAILABLE');
  if ((op.security ?? []).length > 0) codes.push('INVALID_API_KEY', 'INVALID_SESSION');
  // any body is parsed (a DELETE with an empty JSON body too): too large, or of a type not taken
  if (method !== 'GET' && method !== 'HEAD') codes.push('FILE_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if ((op.parameters ?? []).some((p) => p.in === 'path')) codes.push('NOT_FOUND');
  return codes;
}

type Json = Record<string, unknown>;
interface Response {
  description?: string;
  headers?: Json;
  content?: Json;
}

function envelopeFor(codes: readonly ErrorCode[]): Json {
  return {
    type: 'object',
    required: ['success', 'error'],
    properties: {
      success: { type: 'boolean', enum: [false] },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: [...codes], description: 'What went wrong, for a program to act on' },
          message: { type: 'string', description: 'What went wrong and what to do, for a person to read' },
        },
      },
    },
  };
}

/**
 * Adds to every operation of `paths` one response per error status it can answer, with its codes;
 * headers (Retry-After, X-RateLimit-*) are taken from the operation's 4XX / 5XX response.
 */
export function documentErrors(paths: Record<string, Record<string, Json>>): void {
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const responses = op.responses as Record<string, Response> | undefined;
      if (!responses) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const codes = new Set<ErrorCode>([...commonErrors(method.toUpperCase(), path, op), ...(ROUTE_ERRORS[name] ?? [])]);
      const byStatus = new Map<number, ErrorCode[]>();
      for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
      for (const [status, list] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
        if (responses[String(status)]) continue;
        const range = responses[`${String(status)[0]}XX`] ?? responses[`${String(status)[0]}xx`];
        responses[String(status)] = {
          description: list.map((code) => `${code}: ${ERROR_MEANINGS[code]}`).join('; '),
          ...(range?.headers ? { headers: range.headers } : {}),
          content: { 'application/json': { schema: envelopeFor(list) } },
        };
      }
    }
  }
}

/** The operationIds integrators' generated clients name their methods by. */
export const OPERATION_IDS: Record<string, string> = {
  'GET /api/v1/health': 'getHealth',
  'GET /api/v1/openapi.json': 'getOpenApiDocument',
  'POST /api/v1/auth/register': 'register',
  'POST /api/v1/auth/login': 'login',
  'POST /api/v1/auth/logout': 'logout',
  'GET /api/v1/account': 'getAccount',
  'POST /api/v1/keys': 'createApiKey',
  'GET /api/v1/keys': 'listApiKeys',
  'DELETE /api/v1/keys/{id}': 'revokeApiKey',
  'POST /api/v1/licenses': 'redeemLicense',
  'POST /api/v1/analyze': 'analyzeTire',
  'POST /api/v1/analyze/check': 'checkCapture',
  'GET /api/v1/scans': 'listScans',
  'GET /api/v1/vehicles': 'listVehicles',
  'GET /api/v1/scans/export': 'exportScansCsv',
  'GET /api/v1/scans/{scanId}': 'getScan',
  'PATCH /api/v1/scans/{scanId}': 'correctScan',
  'DELETE /api/v1/scans/{scanId}': 'deleteScan',
  'GET /api/v1/scans/{scanId}/image': 'getScanImage',
  'GET /api/v1/scans/{scanId}/overlays': 'getScanOverlays',
  'PUT /api/v1/scans/{scanId}/measurement': 'setScanMeasurement',
  'GET /api/v1/settings': 'getSettings',
  'PUT /api/v1/settings': 'updateSettings',
  'GET /api/v1/connection': 'getConnection',
  'GET /api/v1/calibration': 'getCalibration',
  'POST /api/v1/calibration': 'startCalibration',
  'DELETE /api/v1/calibration': 'revertCalibration',
  'PUT /api/v1/sync/scans/{scanId}': 'pushSyncScan',
  'GET /api/v1/sync/scans': 'listChainScans',
  'GET /api/v1/sync/shops': 'listChainShops',
  'GET /api/v1/sync/status': 'getSyncStatus',
  'PUT /api/v1/sync/link': 'linkHub',
  'DELETE /api/v1/sync/link': 'unlinkHub',
  'POST /api/v1/sync/resend': 'resendToHub',
  'POST /api/v1/sync/run': 'syncNow',
  'GET /api/v1/sync/hub-scans': 'listHubScans',
  'GET /api/v1/sync/hub-shops': 'listHubShops',
  'GET /api/v1/sync/hub-scans/{scanId}/image': 'getHubScanImage',
};

/**
 * An operation's operationId: its OPERATION_IDS name, else one made from the method and the path
 * ("getScansByScanIdImage"), so a route added later has one too.
 */
export function operationIdOf(method: string, path: string): string {
  const named = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
  if (named) return named;
  const words = path
    .replace(/^\/api\/v1\//, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      const text = param ? `by-${param[1]}` : segment;
      return text
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
    });
  return `${method.toLowerCase()}${words.join('')}`;
}
