/**
 * Who is calling, decided once per request before the body is read.
 *
 * An X-API-Key header wins over the cookie when both are sent: a POS that also happens
 * to hold a browser cookie is metered on its key. A key that is sent but bad is a 401,
 * never a silent fall back to anonymous; so is a session cookie that is unknown or
 * expired (the stale cookie is cleared in the same reply), and so is `Authorization: Bearer`
 * without an X-API-Key, or a key sent in any other header (keys are read from X-API-Key only; a
 * proxy's own Authorization next to an X-API-Key, or one not holding a key, is left alone).
 */
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors.js';
import { API_KEY_SHAPE } from '../types.js';
import type { Caller } from '../types.js';
import { SESSION_COOKIE, isThisComputer } from './security.js';
import type { AuthMode } from './types.js';

export type AccountCaller = Caller & { kind: 'account' };

/** HttpOnly, SameSite=Strict, Path=/; Secure when the request came over TLS. */
export function sessionCookieOptions(request: FastifyRequest, maxAgeS?: number): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: request.protocol === 'https',
    ...(maxAgeS === undefined ? {} : { maxAge: maxAgeS }),
  };
}

/** How many times a header was sent: Node joins repeats into one "a, b" value, so they are counted in the raw headers. */
export function timesSent(request: FastifyRequest, lowerCaseName: string): number {
  return request.raw.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === lowerCaseName).length;
}

/** Header names a client might put a key in by mistake; X-API-Key is the one read. */
const KEYISH_HEADER = /api[-_]?key|token|auth/i;

/** Whether a header value is a key, alone or as the one credential of a scheme (`ApiKey tw_…`, `Basic …`). */
function holdsKey(value: string): boolean {
  const parts = value.trim().split(/\s+/);
  if (parts.some((part) => API_KEY_SHAPE.test(part))) return parts.length <= 2;
  const [scheme, credentials] = parts;
  if (parts.length !== 2 || !/^basic$/i.test(scheme!) || !/^[A-Za-z0-9+/_-]+=*$/.test(credentials!)) return false;
  // Basic, in base64 or base64url: the key as user or password
  const decoded = Buffer.from(credentials!.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1');
  return decoded.split(':').some((part) => API_KEY_SHAPE.test(part));
}

/**
 * The header a key was sent in instead of X-API-Key (`Authorization: <key>`, `ApiKey <key>`,
 * Basic with the key as user or password, `Api-Key`, `apikey`, `X-Auth-Token`, …), or null.
 * Only Authorization and headers named like a key or token are read, and only a value that is a
 * key, so a proxy's own Authorization, a request id or a Referer that happens to hold such text
 * are left alone.
 */
function misplacedKeyHeader(request: FastifyRequest): string | null {
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === 'x-api-key' || (lower !== 'authorization' && !KEYISH_HEADER.test(lower))) continue;
    if (holdsKey(raw[i + 1]!)) return /^basic\s/i.test(raw[i + 1]!.trim()) ? `${name}: Basic` : name;
  }
  return null;
}

async function resolveCaller(request: FastifyRequest, reply: FastifyReply): Promise<Caller> {
  const { auth } = request.server.core.services;
  const key = request.headers['x-api-key'];
  if (key !== undefined) {
    if (typeof key !== 'string' || timesSent(request, 'x-api-key') > 1) throw new AppError('INVALID_API_KEY', 'Send exactly one X-API-Key header');
    return auth.authenticateKey(key, request.ip);
  }
  // The key travels in X-API-Key only. A key sent as a bearer token would otherwise make an
  // anonymous call, metered on the address and missing from the shop's history: say where it goes.
  if (/^bearer(\s|$)/i.test(request.headers.authorization ?? '')) {
    throw new AppError('INVALID_API_KEY', 'Send the API key in the X-API-Key header; Authorization: Bearer is not read');
  }
  const misplaced = misplacedKeyHeader(request);
  if (misplaced !== null) {
    throw new AppError('INVALID_API_KEY', `Send the API key in the X-API-Key header; it was sent in ${misplaced}, which is not read`);
  }
  const token = request.cookies[SESSION_COOKIE];
  if (token === undefined) return { kind: 'anonymous', ip: request.ip };
  try {
    return await auth.authenticateSession(token, request.ip);
  } catch (error) {
    if (isAppError(error) && error.code === 'INVALID_SESSION') {
      void reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request));
    }
    throw error;
  }
}

async function enforce(mode: AuthMode, caller: Caller, request: FastifyRequest): Promise<void> {
  if (mode === 'optional') return;
  if (caller.kind === 'anonymous') {
    // shown on a staff screen too (a signed-out window): no HTTP header named; integrators read the code
    throw new AppError('INVALID_SESSION', 'Sign in to do this (a POS program uses an API key instead).');
  }
  if (mode === 'account') return;
  if (caller.via === 'key') {
    throw new AppError('FORBIDDEN', 'An API key cannot do this; sign in to the app instead');
  }
  if (mode === 'desk' && !isThisComputer(request.ip, request.server.core.config)) {
    throw new AppError('FORBIDDEN', 'Settings can only be changed on the computer running TireWear');
  }
  // A hub behind a proxy on its own host sees every caller as this computer (without
  // TIREWEAR_TRUST_PROXY, or a proxy that names no client): its settings and calibration, which
  // act for every shop, are the hub owner's, the account registered first.
  if (mode === 'desk' && request.server.core.config.databaseUrl !== null && caller.kind === 'account') {
    if ((await request.server.core.store.accounts.firstId()) !== caller.account.id) {
      throw new AppError('FORBIDDEN', "Only the hub's owner (the account registered first) can change its settings or calibration");
    }
  }
}

/** How each mode reads in the OpenAPI document (an empty requirement means anonymous is fine). */
const OPENAPI_SECURITY: Record<AuthMode, Array<Record<string, string[]>>> = {
  none: [],
  optional: [{}, { apiKey: [] }, { session: [] }],
  account: [{ apiKey: [] }, { session: [] }],
  session: [{ session: [] }],
  desk: [{ session: [] }],
};

/** Adds the auth hook to the routes of `app` (the /api/v1 scope); each route names its mode. */
export function registerAuth(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: OPENAPI_SECURITY[route.config?.auth ?? 'none'] };
  });
  app.addHook('onRequest', async (request, reply) => {
    const mode = request.routeOptions.config.auth ?? 'none';
    if (mode === 'none') return;
    const caller = await resolveCaller(request, reply);
    await enforce(mode, caller, request);
    request.caller = caller;
  });
}

/** The caller of a route whose mode guarantees an account. */
export function accountCaller(request: FastifyRequest): AccountCaller {
  const caller = request.caller;
  if (caller?.kind !== 'account') throw new Error(`route ${request.url} needs an auth mode that requires an account`);
  return caller;
}

export function anyCaller(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error(`route ${request.url} has auth mode none but reads the caller`);
  return request.caller;
}
