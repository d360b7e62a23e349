/**
 * Listen: create the core, build the HTTP app, bind config.host:config.port. The
 * returned close() stops accepting, lets requests in flight finish for up to
 * SHUTDOWN_GRACE_MS (http/app.ts; then the connections still open are closed), then closes
 * the core (analyzer, database). `npm run serve` and the Electron main process both start here.
 * Once listening, crash leftovers are swept in the background (services/support/leftovers.ts).
 */
import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { createCore, type Core, type CoreOverrides } from './core.js';
import { buildServer, type BuildServerOptions } from './http/app.js';
import { sweepLeftovers, type SweepReport } from './services/support/leftovers.js';
import { lockDataDir } from './storage/data-lock.js';

export interface RunningServer {
  app: FastifyInstance;
  core: Core;
  /** e.g. http://127.0.0.1:8787 (the bound port, also when config.port was 0). */
  url: string;
  /**
   * The crash-leftover sweep started after listen; settles when it is done (null when it
   * failed: the log says why). Never delays startup.
   */
  leftoverSweep: Promise<SweepReport | null>;
  /** Drains requests in flight (at most the shutdown grace, then closes their connections), then closes the core. Idempotent. */
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

/**
 * A desk's previous run that crashed (or lost its disk) left allowance holds and Idempotency-Key
 * claims of the requests it was working on. Housekeeping would expire them after 10 minutes;
 * until then a retry with the same key is told 409 "still being processed" and the holds count
 * as spent (a free shop near its limit is refused). The data-folder lock just taken means no
 * other process can still be working on them: released before the first request. Not on a hub,
 * whose instances share one database.
 */
async function releaseLastRunsClaims(core: Core): Promise<void> {
  const now = core.clock.now();
  try {
    const holds = await core.store.usage.expireReservations(now);
    const claims = await core.store.idempotency.abandonInFlight(now);
    if (holds + claims > 0) {
      core.logger.info({ holds, claims }, `released ${holds} allowance hold(s) and ${claims} Idempotency-Key claim(s) the last run left unfinished`);
    }
  } catch (error) {
    // a database that takes no write now (a full disk) still serves reads; housekeeping tries again
    core.logger.warn({ err: error }, "could not release the last run's unfinished holds and claims; housekeeping expires them within 10 minutes");
  }
}

/**
 * Fails (EADDRINUSE, EACCES) when the port cannot be listened on, before anything opens the
 * database: a start that cannot serve must not upgrade its schema or release the holds and claims
 * of requests another server (an older TireWear, from before the data-folder lock, on the same
 * folder) is still working on. Listening for real happens later and can still fail (the port
 * taken in between): then as before. Port 0 (any free port) is not checked.
 */
async function portIsFree(config: Pick<Config, 'host' | 'port'>): Promise<void> {
  if (config.port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export async function startServer(config: Config, overrides: CoreOverrides = {}, options: StartOptions = {}): Promise<RunningServer> {
  // SQLite lives in the data folder: one server per folder (a hub's folder holds settings alone)
  const unlock = config.databaseUrl === null ? lockDataDir(config.dataDir) : () => undefined;
  try {
    await portIsFree(config);
  } catch (error) {
    unlock();
    throw listenError(error, config);
  }
  let core: Core;
  try {
    core = await createCore(config, overrides);
  } catch (error) {
    unlock();
    throw error;
  }
  let app: FastifyInstance;
  try {
    if (config.databaseUrl === null) await releaseLastRunsClaims(core);
    app = await buildServer(core, options);
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await core.close();
    unlock();
    throw listenError(error, config);
  }
  const stopSweep = new AbortController();
  const leftoverSweep = sweepLeftovers(
    { store: core.store, imagesDir: config.imagesDir, dataDir: config.dataDir, logger: core.logger },
    { now: core.clock.now(), signal: stopSweep.signal },
  ).catch((error: unknown) => {
    core.logger.warn({ err: error }, 'crash-leftover sweep failed; it runs again at the next start');
    return null;
  });
  let closing: Promise<void> | null = null;
  return {
    app,
    core,
    url: urlOf(app.server.address() as AddressInfo),
    leftoverSweep,
    close() {
      stopSweep.abort();
      closing ??= (async () => {
        try {
          await app.close();
        } finally {
          // The sweep asks the store, so the core closes only once it has stopped.
          await leftoverSweep;
          try {
            await core.close();
          } finally {
            unlock();
          }
        }
      })();
      return closing;
    },
  };
}
