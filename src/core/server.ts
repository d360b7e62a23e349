/**
 * Listen: create the core, build the HTTP app, bind config.host:config.port. The
 * returned close() stops accepting, lets requests in flight finish, then closes the
 * core (analyzer, database). `npm run serve` and the Electron main process both start here.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { createCore, type Core, type CoreOverrides } from './core.js';
import { buildServer, type BuildServerOptions } from './http/app.js';

export interface RunningServer {
  app: FastifyInstance;
  core: Core;
  /** e.g. http://127.0.0.1:8787 (the bound port, also when config.port was 0). */
  url: string;
  /** Drains requests in flight, then closes the core. Idempotent. */
  close(): Promise<void>;
}

export type StartOptions = BuildServerOptions;

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Keeps `code` (the desktop shell explains EADDRINUSE to the user) with a message a person can act on. */
function listenError(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return error;
  const message =
    code === 'EADDRINUSE'
      ? `port ${config.port} is already in use on ${config.host}; stop the other program or choose another port (TIREWEAR_PORT or --port)`
      : `not allowed to listen on ${config.host}:${config.port}; choose a port from 1024 to 65535 (TIREWEAR_PORT or --port)`;
  return Object.assign(new Error(message, { cause: error }), { code });
}

export async function startServer(
  config: Config,
  overrides: CoreOverrides = {},
  options: StartOptions = {},
): Promise<RunningServer> {
  const core = await createCore(config, overrides);
  let app: FastifyInstance;
  try {
    app = await buildServer(core, options);
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await core.close();
    throw listenError(error, config);
  }
  let closing: Promise<void> | null = null;
  return {
    app,
    core,
    url: urlOf(app.server.address() as AddressInfo),
    close() {
      closing ??= app.close().finally(() => core.close());
      return closing;
    },
  };
}
