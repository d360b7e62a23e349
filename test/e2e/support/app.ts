/**
 * The real server serving the built renderer, started in-process for one test file:
 * its own temp data dir, port 0, test license keys, the shipped ONNX models. A second
 * server (a hub) can be stopped and started again on its data dir and port.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { testConfig } from '../../support/config.js';
import type { Config } from '../../../src/core/config.js';
import type { CoreOverrides } from '../../../src/core/core.js';
import { startServer } from '../../../src/core/server.js';
import { issueTestCode, makeTestLicenseKeys, type TestLicense } from '../../support/licenses.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const RENDERER_DIR = path.join(ROOT, 'out', 'renderer');

export interface RunningApp {
  url: string;
  port: number;
  dataDir: string;
  issueCode(license?: TestLicense): string;
  /** Stops the server and keeps its data dir, for a restart with `{ dataDir, port }`. */
  stop(): Promise<void>;
  /** Stops the server and removes its data dir. */
  close(): Promise<void>;
}

export interface AppOptions {
  /** Start again on an earlier server's data and port (a hub that comes back). */
  dataDir?: string;
  port?: number;
  /** e.g. a fake analyzer for a hub, which never analyzes and need not load the models. */
  overrides?: CoreOverrides;
  /** Config as loadConfig would have made it (e.g. `origins`: a port set by TIREWEAR_PORT). */
  config?: Partial<Config>;
}

export async function startApp(options: AppOptions = {}): Promise<RunningApp> {
  if (!existsSync(path.join(RENDERER_DIR, 'index.html'))) {
    throw new Error('The renderer is not built: run `npx electron-vite build` before the e2e tests.');
  }
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'tirewear-e2e-')));
  const keys = makeTestLicenseKeys();
  const config = testConfig(dataDir, keys.publicKeyPem, { host: '127.0.0.1', port: options.port ?? 0, rendererDir: RENDERER_DIR, ...options.config }, ROOT);
  const server = await startServer(config, options.overrides);
  return {
    url: server.url.endsWith('/') ? server.url : `${server.url}/`,
    port: Number(new URL(server.url).port),
    dataDir,
    issueCode: (license) => issueTestCode(keys, license),
    stop: () => server.close(),
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
