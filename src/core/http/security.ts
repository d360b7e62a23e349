/**
 * Localhost safety (docs/API.md §7). A server on 127.0.0.1 is reachable by every web page the
 * shop's browser opens, so: the Host header must name this machine (DNS rebinding), a
 * browser request from another origin may not change state or ride the cookie (CSRF),
 * and callers from the LAN are refused unless the owner enabled LAN access, and even
 * then must present an API key. No CORS headers are ever sent.
 */
import os from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { API_PREFIX } from './wire.js';

export const SESSION_COOKIE = 'auth-token';

export const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'content-security-policy': [
    "default-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob: mediastream:",
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; '),
};

/** Paths a LAN caller may read without a key: nothing in them belongs to anyone. */
const OPEN_PATHS = new Set([`${API_PREFIX}/health`, `${API_PREFIX}/openapi.json`]);

export function isLoopbackAddress(ip: string): boolean {
  return /^127\./.test(ip) || ip === '::1' || /^::ffff:127\./i.test(ip);
}

/** A client address as one computer has it: IPv4 without its IPv6-mapped prefix, no zone, lower case. */
export function plainAddress(ip: string): string {
  return ip
    .replace(/^::ffff:(?=\d+\.)/i, '')
    .replace(/%.*$/, '')
    .toLowerCase();
}

/** Link-local addresses (fe80::/10, 169.254/16) are unique only per link: another device can hold the same one. */
function isLinkLocal(address: string): boolean {
  return /^fe[89ab][0-9a-f]:/i.test(address) || /^169\.254\./.test(address);
}

/**
 * Whether a caller is the computer running TireWear: loopback always; on a desk (not a hub) also
 * one of this computer's own routable interface addresses (a desk bound to its LAN address is
 * reached from this computer on that address: the desktop's own window then comes from there).
 * Never a link-local or zoned address (`fe80::1` is the loopback interface's on a Mac and a router's
 * on many LANs), never on a hub (its proxy may connect from the hub's own address on behalf of
 * anyone). Read again at each such call, as DHCP may change them; LAN callers are few.
 */
export function isThisComputer(ip: string, config: Pick<Config, 'databaseUrl'>): boolean {
  if (isLoopbackAddress(ip)) return true;
  if (config.databaseUrl !== null || ip.includes('%')) return false;
  const bare = plainAddress(ip);
  if (isLinkLocal(bare)) return false;
  return Object.values(os.networkInterfaces())
    .flat()
    .some((info) => info !== undefined && !info.internal && !info.address.includes('%') && info.address.toLowerCase() === bare);
}

/** `example.com:8787` → `example.com`, `[::1]:80` → `[::1]`; null when malformed. */
export function hostName(header: string): string | null {
  const host = header.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]\s/@]+)(?::\d{1,5})?$/.exec(host);
  return match ? match[1]! : null;
}

function asHostName(address: string): string {
  const bare = address.replace(/%.*$/, '').toLowerCase();
  return bare.includes(':') ? `[${bare}]` : bare;
}

function lanAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .flatMap((info) => (info ? [asHostName(info.address)] : []));
}

/**
 * This computer's own names, as a POS on the shop LAN calls it: `SHOP-PC` (Windows NetBIOS or
 * LLMNR), `shop-pc.local` (macOS, mDNS), or the full name. A page rebinding its own domain to a
 * LAN address sends its own domain as Host, never these, so they keep the DNS-rebinding guard.
 */
export function ownHostNames(hostname = os.hostname()): string[] {
  const full = hostname.trim().toLowerCase().replace(/\.$/, '');
  if (full === '' || !/^[a-z0-9.-]+$/.test(full)) return [];
  const short = full.split('.')[0]!;
  return [...new Set([full, short, `${short}.local`])];
}

/** Names this server answers to; LAN addresses (and this computer's names) are read again on a miss, as DHCP may change them. */
export function hostAllowList(config: Config): (hostname: string) => boolean {
  const fixed = new Set(['localhost', '127.0.0.1', '[::1]']);
  for (const name of config.allowedHosts) {
    const bareIpv6 = !name.startsWith('[') && name.split(':').length > 2;
    const parsed = hostName(bareIpv6 ? `[${name}]` : name);
    if (parsed) fixed.add(parsed);
  }
  if (!['0.0.0.0', '::', '[::]'].includes(config.host)) fixed.add(asHostName(config.host));
  return (hostname) => fixed.has(hostname) || (config.lanAccess && (lanAddresses().includes(hostname) || ownHostNames().includes(hostname)));
}

function hasSessionCookie(request: FastifyRequest): boolean {
  return new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=`).test(request.headers.cookie ?? '');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function checkOrigin(request: FastifyRequest): void {
  const cookie = hasSessionCookie(request);
  if (!cookie && SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `${request.protocol}://${request.headers.host}`.toLowerCase()) {
    throw new AppError('FORBIDDEN', 'Cross-origin requests are not allowed');
  }
  // Other ports of localhost are the same *site*, so SameSite=Strict still sends the
  // cookie with their <img> and form requests, which carry no Origin: Fetch Metadata tells.
  const site = request.headers['sec-fetch-site'];
  if (cookie && (site === 'cross-site' || site === 'same-site')) {
    throw new AppError('FORBIDDEN', 'Cross-origin requests are not allowed');
  }
}

function decodedPath(url: string): string {
  const raw = url.split('?')[0]!;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function checkClient(request: FastifyRequest, config: Config): void {
  // A hub (hub mode, on PostgreSQL) is a server for many shops, usually behind a proxy:
  // the desk's LAN rule does not apply to it; the Host allow-list and credentials do.
  if (config.databaseUrl !== null || isThisComputer(request.ip, config)) return;
  if (!config.lanAccess) {
    throw new AppError('FORBIDDEN', 'This server only accepts requests from this computer (LAN access is off)');
  }
  // the route as matched, not the raw URL: /api/v1/%61uth/register reaches the same handler
  const path = request.routeOptions.url ?? decodedPath(request.url);
  // sign-in, registration and sign-out never look at a key, and a session is of no use from the
  // LAN (its requests need a key): any X-API-Key value would have let a LAN host create accounts
  // and guess passwords here
  if (path.startsWith(`${API_PREFIX}/auth/`)) {
    throw new AppError('FORBIDDEN', 'Accounts are signed in to on the shop computer itself; from the LAN, use an API key');
  }
  if (request.headers['x-api-key'] === undefined && !OPEN_PATHS.has(path)) {
    throw new AppError('FORBIDDEN', 'LAN access requires an API key (X-API-Key header)');
  }
}

export function applySecurityHeaders(reply: FastifyReply): void {
  void reply.headers(SECURITY_HEADERS);
}

export function registerSecurity(app: FastifyInstance): void {
  const config = app.core.config;
  const allowedHost = hostAllowList(config);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A keep-alive connection would hold close() open after its last answer; end it with that answer.
  app.addHook('onSend', async (_request, reply) => {
    if (closing) void reply.header('connection', 'close');
  });
  app.addHook('onRequest', async (request, reply) => {
    applySecurityHeaders(reply);
    if (request.url.startsWith('/api/')) void reply.header('cache-control', 'no-store');
    if (closing) {
      void reply.header('connection', 'close');
      throw new AppError('SERVER_BUSY', 'The server is shutting down; retry in a moment', {
        headers: { 'retry-after': '5' },
      });
    }
    // Node keeps the first of two Host headers; which one a proxy in front went by is unknown (RFC 9112 §3.2)
    if (request.raw.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'host').length > 1) {
      throw new AppError('VALIDATION_ERROR', 'Send the Host header once (it was sent more than once)');
    }
    const host = hostName(request.headers.host ?? '');
    if (!host || !allowedHost(host)) {
      throw new AppError('FORBIDDEN', 'Unknown Host header; open the app through localhost or 127.0.0.1');
    }
    checkClient(request, config);
    checkOrigin(request);
  });
}
