/**
 * The HTTP face of a core: a Fastify instance with every plugin registered explicitly,
 * not listening. server.ts listens; tests drive it with app.inject.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pkg from '../../../package.json' with { type: 'json' };
import { errorHandler, toErrorReply } from './errors.js';
import { RouteIndex, notFoundHandler } from './not-found.js';
import { registerCookie } from './plugins/cookie.js';
import { registerRenderer } from './plugins/renderer.js';
import { registerSwagger } from './plugins/swagger.js';
import { apiRoutes } from './routes/index.js';
import { ErrorEnvelope } from './schemas.js';
import { SECURITY_HEADERS, applySecurityHeaders, registerSecurity } from './security.js';
import type { HttpCore } from './types.js';
import { API_PREFIX } from './wire.js';
import { AppError } from '../errors.js';

export type { HttpCore };

/** JSON bodies are small (credentials, names, codes); only /analyze takes an upload. */
export const JSON_BODY_LIMIT = 64 * 1024;
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * Headers and body must have arrived within this, or the socket gets 408 and is closed: a
 * stalled upload would otherwise hold its connection and up to 10 MiB forever. A full-size
 * upload needs about 8 s over 10 Mbit/s Wi-Fi.
 */
export const REQUEST_TIMEOUT_MS = 60_000;

export interface BuildServerOptions {
  /** false: no request logs (tests); true or absent: the core's logger; an object: pino options. */
  logger?: boolean | FastifyServerOptions['logger'];
  /** REQUEST_TIMEOUT_MS unless given (tests use a short one). */
  requestTimeoutMs?: number;
}

/** Errors the socket parser raises before Fastify sees a request (oversized headers, garbage). */
function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? `Request headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`
      : status === 408
        ? 'The request took too long to arrive'
        : 'Malformed HTTP request';
  const body = JSON.stringify({ success: false, error: { code: 'VALIDATION_ERROR', message } });
  const headers = Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${headers}\r\n${body}`,
    );
  }
  socket.destroy();
}

function loggerOptions(core: HttpCore, logger: BuildServerOptions['logger']): FastifyServerOptions {
  if (logger === false) return { logger: false };
  if (logger === true || logger === undefined) return { loggerInstance: core.logger };
  return { logger };
}

export async function buildServer(core: HttpCore, options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const app = Fastify({
    ...loggerOptions(core, options.logger),
    trustProxy: core.config.trustProxy,
    bodyLimit: JSON_BODY_LIMIT,
    requestTimeout,
    // Node enforces requestTimeout only while headersTimeout is no longer, and checks at connectionsCheckingInterval.
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(requestTimeout / 4)),
    },
    // Requests arriving while closing get SERVER_BUSY in the envelope (security.ts) instead.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      applySecurityHeaders(reply);
      const mapped = toErrorReply(new AppError('VALIDATION_ERROR', error.message));
      void reply.code(mapped.status).send(mapped.body);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('core', core);
  app.decorateRequest('caller', null);
  app.addSchema(ErrorEnvelope);
  app.setErrorHandler(errorHandler);
  registerSecurity(app);
  await registerCookie(app);
  await registerSwagger(app, pkg.version);

  const routes = new RouteIndex();
  app.addHook('onRoute', routes.add);
  await app.register(apiRoutes, { prefix: API_PREFIX, version: pkg.version });
  const pages = await registerRenderer(app, core.config.rendererDir);
  app.setNotFoundHandler(notFoundHandler(routes, pages));
  return app;
}
