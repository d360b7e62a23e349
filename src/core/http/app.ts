/**
 * The HTTP face of a core: a Fastify instance with every plugin registered explicitly,
 * not listening. server.ts listens; tests drive it with app.inject.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES, type Server } from 'node:http';
import { AjvCompiler } from '@fastify/ajv-compiler';
import type AjvCompilerTypes from '@fastify/ajv-compiler';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pkg from '../../../package.json' with { type: 'json' };
import { errorHandler, toErrorReply } from './errors.js';
import { StorageTrouble } from './storage-trouble.js';
import { MAX_PARAM_LENGTH, RouteIndex, notFoundHandler, routeNotFound } from './not-found.js';
import { registerCookie } from './plugins/cookie.js';
import { registerRenderer } from './plugins/renderer.js';
import { registerSwagger } from './plugins/swagger.js';
import { UPLOAD_IDLE_TIMEOUT_MS } from './upload-watch.js';
import { PARSE_GRACE_MS } from './form-guard.js';
import { ANSWER_TIMEOUT_MS, registerAnswerDeadline } from './answer-deadline.js';
import { LINGER, bodyStillArriving, lingerBeforeClose, type LingerLimits } from './linger.js';
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
/**
 * A hub's bound instead: shops push photos over their own lines, and the desktop gives a 10 MiB
 * one up to uploadTimeoutMs() (≈ 7.3 min at 32 KiB/s, sync/hub-client.ts); a hub reached without
 * a buffering proxy would otherwise cut a slow shop off at a minute on every try. Headers still
 * have REQUEST_TIMEOUT_MS.
 */
export const HUB_REQUEST_TIMEOUT_MS = 8 * 60_000;
/**
 * Once close() has begun, requests in flight get this long to finish (an analysis takes about
 * a second, so a queue of them is usually worked off); then every connection still open is
 * closed, so a stalled upload or a client that never reads cannot keep the server from stopping.
 * Node stops enforcing REQUEST_TIMEOUT_MS once closing starts, so this is the only bound then.
 */
export const SHUTDOWN_GRACE_MS = 10_000;

export interface BuildServerOptions {
  /** false: no request logs (tests); true or absent: the core's logger; an object: pino options. */
  logger?: boolean | FastifyServerOptions['logger'];
  /** REQUEST_TIMEOUT_MS (a hub: HUB_REQUEST_TIMEOUT_MS) unless given (tests use a short one). */
  requestTimeoutMs?: number;
  /** SHUTDOWN_GRACE_MS unless given (tests use a short one). */
  shutdownGraceMs?: number;
  /** UPLOAD_IDLE_TIMEOUT_MS (upload-watch.ts) unless given (tests use a short one). */
  uploadIdleTimeoutMs?: number;
  /** PARSE_GRACE_MS (form-guard.ts) unless given (tests use a short one). */
  parseGraceMs?: number;
  /** ANSWER_TIMEOUT_MS (answer-deadline.ts) unless given (tests use a short one). */
  answerTimeoutMs?: number;
  /** LINGER (linger.ts) unless given. */
  linger?: LingerLimits;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** How long an /analyze upload may send nothing before it is answered 408 (routes/analyze.ts). */
    uploadIdleTimeoutMs: number;
    /** How long a form parser has after an upload's last byte before it is answered 400 (form-guard.ts). */
    parseGraceMs: number;
  }
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
  const headers = Object.entries(SECURITY_HEADERS)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${headers}\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * `Expect: 100-continue`: Node would answer 100 before any hook ran, so a client would send a
 * 10 MiB body only to be told 413 (or 401, 403, 503). The 100 goes out when the server starts
 * reading the body (the stream is resumed), so a request refused on its headers (an oversized
 * Content-Length included) gets its final answer instead, and Node closes that connection.
 */
function deferContinue(server: Server): void {
  server.on('checkContinue', (req, res) => {
    // Node also resumes an unread body to drain it after the answer: no 100 then.
    req.once('resume', () => {
      if (!res.headersSent && !res.writableEnded) res.writeContinue();
    });
    server.emit('request', req, res);
  });
}

/**
 * JSON bodies: Fastify's parser (prototype poisoning refused), except that an empty body is no
 * body on a route that takes none (many POS HTTP wrappers send `Content-Type: application/json`
 * on every call, logout and DELETE included) and a 400 saying so on a route that needs one.
 * Fastify's text/plain parser is removed: a JSON route sent text/plain is 415, like any other type.
 */
function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() !== '') return parseJson(request, text, done);
    if (request.routeOptions.schema?.body === undefined) return done(null, undefined);
    done(new AppError('VALIDATION_ERROR', 'The request body is empty; this endpoint takes a JSON object'), undefined);
  });
}

function loggerOptions(core: HttpCore, logger: BuildServerOptions['logger']): FastifyServerOptions {
  if (logger === false) return { logger: false };
  if (logger === true || logger === undefined) return { loggerInstance: core.logger };
  return { logger };
}

const ajvCompilers = AjvCompiler();

/**
 * Fastify's Ajv converts types and drops unknown properties, which query strings and path
 * parameters need (they arrive as text) but which turned JSON bodies' mistakes into data:
 * `{"port": true}` saved port 1, `{"name": true}` named a key "true", `{"force": true}` was
 * stripped to `{}`. Bodies are checked as sent (a wrong type or an unknown field is 400), the
 * other parts as before.
 */
type RouteSchema = { schema: unknown; method: string; url: string; httpPart?: string };
type Compile = (route: RouteSchema) => unknown;
type AjvServerOptions = { customOptions?: Record<string, unknown> };
const buildValidator = ((externalSchemas: Record<string, unknown>, ajvOptions: AjvServerOptions) => {
  // the pool's declared type says a compile takes a schema; Fastify calls it with the route's parts
  const compiler = (customOptions: Record<string, unknown> | undefined) =>
    ajvCompilers(externalSchemas as never, { ...ajvOptions, customOptions }) as unknown as Compile;
  const lenient = compiler(ajvOptions.customOptions);
  const strict = compiler({ ...ajvOptions.customOptions, coerceTypes: false, removeAdditional: false });
  // query strings are text (so `limit=5` is coerced) but a parameter the route does not know is
  // refused by name, never dropped: a misspelt filter must not list or export every scan
  const query = compiler({ ...ajvOptions.customOptions, removeAdditional: false });
  return (route: RouteSchema) => (route.httpPart === 'body' ? strict : route.httpPart === 'querystring' ? query : lenient)(route);
}) as unknown as AjvCompilerTypes.BuildCompilerFromPool;

export async function buildServer(core: HttpCore, options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const requestTimeout = options.requestTimeoutMs ?? (core.config.databaseUrl ? HUB_REQUEST_TIMEOUT_MS : REQUEST_TIMEOUT_MS);
  const shutdownGrace = options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
  const app = Fastify({
    ...loggerOptions(core, options.logger),
    trustProxy: core.config.trustProxy,
    bodyLimit: JSON_BODY_LIMIT,
    schemaController: { compilersFactory: { buildValidator } },
    requestTimeout,
    // A longer id names no scan or key: the router's refusal becomes a 404 (frameworkErrors).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Node enforces requestTimeout only while headersTimeout is no longer, and checks at connectionsCheckingInterval.
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: Math.min(requestTimeout, REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(requestTimeout / 4)),
    },
    // Requests arriving while closing get SERVER_BUSY in the envelope (security.ts) instead.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors: (error, request, reply: FastifyReply) => {
      applySecurityHeaders(reply);
      const mapped = toErrorReply(
        error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? routeNotFound(request.method, request.url.split('?')[0]!) : new AppError('VALIDATION_ERROR', error.message),
      );
      void reply.code(mapped.status).send(mapped.body);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  deferContinue(app.server);
  let forceClose: NodeJS.Timeout | undefined;
  if (core.config.trustProxy !== false) {
    // A proxy that TIREWEAR_TRUST_PROXY does not name makes every caller look like the proxy
    // (metering, the LAN rule) and drops X-Forwarded-Proto (the Origin check then refuses
    // browsers): say so once per address, for whoever reads the hub's log.
    const warned = new Set<string>();
    app.addHook('onRequest', async (request) => {
      if (request.headers['x-forwarded-for'] === undefined || (request.ips?.length ?? 0) > 1) return;
      const peer = request.socket.remoteAddress ?? '';
      if (warned.has(peer) || warned.size >= 64) return;
      warned.add(peer);
      core.logger.warn(
        { peer },
        'X-Forwarded-For came from an address TIREWEAR_TRUST_PROXY does not trust: its callers are taken for that address; name the proxy in TIREWEAR_TRUST_PROXY',
      );
    });
  }
  app.addHook('preClose', (done) => {
    forceClose = setTimeout(() => {
      app.log.warn(`closing the connections still open ${shutdownGrace} ms after shutdown began`);
      app.server.closeAllConnections();
    }, shutdownGrace);
    forceClose.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearTimeout(forceClose);
    done();
  });

  app.decorate('core', core);
  app.decorate('storageTrouble', new StorageTrouble());
  app.decorate('uploadIdleTimeoutMs', options.uploadIdleTimeoutMs ?? UPLOAD_IDLE_TIMEOUT_MS);
  app.decorate('parseGraceMs', options.parseGraceMs ?? PARSE_GRACE_MS);
  registerAnswerDeadline(app, options.answerTimeoutMs ?? ANSWER_TIMEOUT_MS);
  const linger = options.linger ?? LINGER;
  // Answered before its body arrived: the connection closes, once the rest is read (linger.ts).
  // Not after a 408: that client has stopped sending.
  app.addHook('onSend', async (request, reply) => {
    if (reply.statusCode === 408 || !bodyStillArriving(request.raw)) return;
    void reply.header('connection', 'close');
    lingerBeforeClose(request.raw, linger);
  });
  // `/scans/` (a trailing slash) or `/scans//measurement` reach a route with an empty id: no such
  // path, not bad input, whichever validator the route uses (a static wildcard's '*' may be empty)
  app.addHook('preValidation', async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (params && Object.entries(params).some(([name, value]) => name !== '*' && value === '')) {
      throw new AppError('NOT_FOUND', 'Nothing is found at a path with an empty id (a trailing slash or //): drop the slash, or add the id');
    }
  });
  app.decorateRequest('caller', null);
  app.addSchema(ErrorEnvelope);
  app.setErrorHandler(errorHandler);
  registerJsonParser(app);
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
