/**
 * The built React UI at `/`. Client-side routes (extensionless paths outside /api/)
 * fall back to index.html; when the UI was never built, `/` says so instead of a
 * bare 404, so someone running `npm run serve` from a fresh clone knows what to do.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>TireWear</title></head>
<body><h1>TireWear</h1><p>The user interface is not built. Run <code>npm run build</code>, then restart.
The API is available under <a href="/api/v1/openapi.json">/api/v1</a>.</p></body></html>
`;

/** Answers a request the router did not match when it is a page of the UI; false otherwise. */
export type PageFallback = (request: FastifyRequest, reply: FastifyReply) => boolean;

function isPageRequest(request: FastifyRequest): boolean {
  const urlPath = request.url.split('?')[0]!;
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    // `/api` itself too: a POS probing the base path gets the API's 404 envelope, not the UI's page
    !/^\/api(\/|$)/i.test(urlPath) &&
    path.posix.extname(urlPath) === ''
  );
}

export async function registerRenderer(app: FastifyInstance, rendererDir: string | null): Promise<PageFallback> {
  if (rendererDir && existsSync(path.join(rendererDir, 'index.html'))) {
    await app.register(fastifyStatic, { root: rendererDir, wildcard: true, cacheControl: false });
    return (request, reply) => {
      if (!isPageRequest(request)) return false;
      void reply.header('cache-control', 'no-cache').sendFile('index.html');
      return true;
    };
  }
  const sendNotBuilt = (reply: FastifyReply) => reply.type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
  app.get('/', { schema: { hide: true } }, (_request, reply) => sendNotBuilt(reply));
  return (request, reply) => {
    if (!isPageRequest(request)) return false;
    void sendNotBuilt(reply);
    return true;
  };
}
