/**
 * Unknown routes: 404 NOT_FOUND, or 405 METHOD_NOT_ALLOWED with an Allow header when
 * the path is an API route under another method. Fastify has no 405 of its own, so the
 * API routes are collected as they are added and matched here by pattern.
 */
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AppError } from '../errors.js';
import type { PageFallback } from './plugins/renderer.js';
import { API_PREFIX } from './wire.js';

/**
 * Longest path parameter (a scan or key id) the router matches, the schemas' `maxLength` of
 * an id: a longer segment names nothing, so it is a 404 like any unknown id (app.ts gives
 * Fastify this as `maxParamLength` and maps its error to NOT_FOUND).
 */
export const MAX_PARAM_LENGTH = 128;

/** The 404 of a path no route serves; long paths are shortened in the message. */
export function routeNotFound(method: string, urlPath: string): AppError {
  const shown = urlPath.length > 200 ? `${urlPath.slice(0, 200)}…` : urlPath;
  return new AppError('NOT_FOUND', `No route ${method} ${shown}`);
}

interface KnownPath {
  pattern: RegExp;
  methods: Set<string>;
}

function toPattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return `[^/]{1,${MAX_PARAM_LENGTH}}`;
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

export class RouteIndex {
  private readonly paths = new Map<string, KnownPath>();

  /** Use as an onRoute hook. */
  readonly add = (route: RouteOptions): void => {
    if (!route.url.startsWith(API_PREFIX)) return;
    const known = this.paths.get(route.url) ?? { pattern: toPattern(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) known.methods.add(method);
    this.paths.set(route.url, known);
  };

  /** Methods that some API route accepts for this concrete path, sorted. */
  allowed(urlPath: string): string[] {
    const methods = new Set<string>();
    for (const known of this.paths.values()) {
      if (known.pattern.test(urlPath)) for (const method of known.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

export function notFoundHandler(routes: RouteIndex, pages: PageFallback) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (pages(request, reply)) return reply;
    const urlPath = request.url.split('?')[0]!;
    const allowed = routes.allowed(urlPath);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      throw new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${urlPath}; use ${allowed.join(', ')}`);
    }
    throw routeNotFound(request.method, urlPath);
  };
}
