/** The X-RateLimit-* headers every analyze answer carries, refusals included (docs/API.md §4.2). */
import { isAppError } from '../errors.js';
import type { ScanService } from '../services/ports.js';
import { rateLimitHeaders } from '../services/metering.js';
import type { Caller } from '../types.js';

/**
 * Every analyze answer carries X-RateLimit-* (docs/API.md §4), also when the upload itself was refused; not a
 * refusal of the auth or security hooks (a bad key, a foreign Host), made before the caller is known.
 */
export async function withRateLimitHeaders(scans: ScanService, error: unknown, caller: Caller): Promise<unknown> {
  if (!isAppError(error) || 'X-RateLimit-Limit' in error.headers) return error;
  const state = await scans.rateLimit(caller).catch(() => null);
  if (state) Object.assign(error.headers, rateLimitHeaders(state));
  return error;
}
