/**
 * The /api/v1 contract, one source for every side (docs/API.md): TypeBox schemas of every request
 * and response, the error codes with their statuses, and the sync wire format. The server validates,
 * serializes and documents (OpenAPI) with these schemas; every wire type, in core and renderer
 * alike, is `Static<>` of one of them. Split by area; this file only gathers them.
 */
export * from './limits.js';
export * from './common.js';
export * from './error-codes.js';
export * from './errors.js';
export * from './operations.js';
export * from './analyze.js';
export * from './scans.js';
export * from './queries.js';
export * from './account.js';
export * from './desk.js';
export * from './calibration.js';
export * from './sync.js';
