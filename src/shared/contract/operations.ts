/**
 * Per operation of /api/v1, what the OpenAPI document says of it beyond its schemas: the operationId
 * a generated client names its method by, and the error codes only it answers (beside those every
 * operation of its kind answers, derived from its security, method and path in
 * src/core/http/openapi-errors.ts). Keyed "METHOD /api/v1/path{param}".
 */
import type { ErrorCode } from './error-codes.js';

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
