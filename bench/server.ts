/**
 * The bench's server process: startServer exactly as `npm run serve` does (same core,
 * same HTTP app, request logging at info into a file), run as a child so that its
 * memory is measured apart from the load generator. Told what to do over IPC.
 */
import { createWriteStream } from 'node:fs';
import { defaultConfig, type Config } from '../src/core/config.js';
import { createLogger } from '../src/core/logger.js';
import { startServer } from '../src/core/server.js';
import { DecodeOnlyAnalyzer } from './stand-in-analyzer.js';

export interface ServerOptions {
  dataDir: string;
  modelsDir: string;
  licensePublicKeyPem: string;
  analyzer: 'onnx' | 'decode-only';
  logFile: string;
  analysisConcurrency?: number;
  analysisQueueLimit?: number;
}

export type ServerMessage = { ready: string } | { failed: string } | { memory: NodeJS.MemoryUsage };

const options = JSON.parse(process.argv[2] ?? '{}') as ServerOptions;
const base = defaultConfig();
const config: Config = {
  ...base,
  port: 0,
  dataDir: options.dataDir,
  imagesDir: `${options.dataDir}/images`,
  modelsDir: options.modelsDir,
  rendererDir: null,
  licensePublicKeyPem: options.licensePublicKeyPem,
  analysisConcurrency: options.analysisConcurrency ?? base.analysisConcurrency,
  analysisQueueLimit: options.analysisQueueLimit ?? base.analysisQueueLimit,
};
const logger = createLogger({ level: 'info', destination: createWriteStream(options.logFile) });
const analyzer = options.analyzer === 'decode-only' ? { analyzer: new DecodeOnlyAnalyzer() } : {};

const send = (message: ServerMessage) => process.send?.(message);
startServer(config, { logger, ...analyzer }).then(
  (server) => {
    send({ ready: server.url });
    process.on('message', (message) => {
      if (message === 'stop') void server.close().finally(() => process.exit(0));
      // Where the memory is (V8 heap, Buffers, native) when RSS looks high.
      if (message === 'memory') send({ memory: process.memoryUsage() });
    });
  },
  (error: unknown) => {
    send({ failed: (error as Error).message });
    process.exit(1);
  },
);
