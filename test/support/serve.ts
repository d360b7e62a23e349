/** A server on a real socket for each test: a fresh test core, listening on a free loopback port. */
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import type { Config } from '../../src/core/config.js';
import { buildServer, type BuildServerOptions } from '../../src/core/http/app.js';
import { testCore, type TestCore } from './core.js';

export interface Served {
  t: TestCore;
  app: FastifyInstance;
  url: string;
}

/**
 * Call at a test file's top level. Returns `serve`, which starts one server (a core with `config`,
 * the server with `options`), and registers the afterEach that closes it and removes its core.
 */
export function servePerTest(): (config?: Partial<Config>, options?: BuildServerOptions) => Promise<Served> {
  let t: TestCore | null = null;
  let app: FastifyInstance | null = null;
  afterEach(async () => {
    await app?.close();
    await t?.cleanup();
    app = null;
    t = null;
  });
  return async (config = {}, options = {}) => {
    t = await testCore({ config });
    app = await buildServer(t.core, { logger: false, ...options });
    return { t, app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
  };
}
