/**
 * `npm run serve`: the HTTP server without the desktop window (127.0.0.1:8787 unless
 * configured). SIGINT/SIGTERM finish the requests in flight (up to SHUTDOWN_GRACE_MS, then
 * their connections are closed), close the database and exit 0; a bad setting exits 2 with
 * the reason, a failed start exits 1.
 */
import { diskRefusal } from '../storage/files.js';
import { ConfigError, loadConfig, serveUsage, type Config } from '../config.js';
import { SHUTDOWN_GRACE_MS } from '../http/app.js';
import { answerHelp } from './args.js';
import { createLogger } from '../logger.js';
import { startServer } from '../server.js';

/**
 * close() ends the connections left after SHUTDOWN_GRACE_MS; should closing the database or the
 * models then still hang, the process exits anyway (1) this much later, so a stop always ends.
 */
const EXIT_BACKSTOP_MS = SHUTDOWN_GRACE_MS + 10_000;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  answerHelp(serveUsage().trimEnd(), argv);
  let config: Config;
  try {
    config = loadConfig(process.env, argv);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`tirewear: ${error.message}\n`);
    process.exit(2);
  }
  const logger = createLogger({ level: config.logLevel });
  let server;
  try {
    server = await startServer(config, { logger });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.fatal({ err: error }, message);
    // the log line is for a log collector; a person at the terminal reads stderr
    const code = (error as NodeJS.ErrnoException | null)?.code;
    // (a port in use is already explained by the server's own message)
    // a file system's refusal names its path (the data folder, its lock); listen's does not
    const onDisk = typeof (error as NodeJS.ErrnoException | null)?.path === 'string';
    const hint =
      !onDisk && (code === 'EACCES' || code === 'EADDRNOTAVAIL')
        ? `: TireWear may not listen on ${config.host}:${config.port}; choose a port from 1024 to 65535 and a local address`
        : diskRefusal(code) === 'full'
          ? `: the disk holding the data folder ${config.dataDir} is full; free space on it`
          : code?.startsWith('SQLITE_CANTOPEN') || code === 'ENOTDIR' || code === 'EEXIST' || (onDisk && diskRefusal(code) === 'not-writable')
            ? `: the data folder ${config.dataDir} must be a folder TireWear can write (its tirewear.db a file)`
            : '';
    process.stderr.write(`tirewear: could not start: ${message}${hint}\n`);
    process.exit(1);
  }
  logger.info({ url: server.url, dataDir: config.dataDir }, `TireWear API listening at ${server.url}/api/v1`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `shutting down: finishing requests in flight (at most ${SHUTDOWN_GRACE_MS / 1000} s)`);
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, EXIT_BACKSTOP_MS).unref();
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: the launcher, npm and the terminal may each deliver the same stop.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
}

void main();
