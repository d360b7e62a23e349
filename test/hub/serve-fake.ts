/**
 * One hub instance as its own process, for the multi-instance tests: the real config
 * loading (TIREWEAR_* from the environment) and server, with the fake analyzer so no
 * model is loaded. Prints "LISTENING <url>" once it accepts requests.
 */
import { loadConfig } from '../../src/core/config.js';
import { createLogger } from '../../src/core/logger.js';
import { startServer } from '../../src/core/server.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';

const config = loadConfig(process.env, process.argv.slice(2));
const server = await startServer(config, { analyzer: new FakeAnalyzer(), logger: createLogger({ level: 'silent' }) }, { logger: false });
process.stdout.write(`LISTENING ${server.url}\n`);
process.once('SIGTERM', () => {
  void server.close().finally(() => process.exit(0));
});
