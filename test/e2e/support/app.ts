/**
 * The real server serving the built renderer, started in-process for one test file:
 * its own temp data dir, port 0, test license keys, the shipped ONNX models.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig, type Config } from '../../../src/core/config.js';
import { startServer } from '../../../src/core/server.js';
import { issueTestCode, makeTestLicenseKeys, type TestLicense } from '../../support/licenses.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const RENDERER_DIR = path.join(ROOT, 'out', 'renderer');

export interface RunningApp {
  url: string;
  dataDir: string;
  issueCode(license?: TestLicense): string;
  close(): Promise<void>;
}

export async function startApp(): Promise<RunningApp> {
  if (!existsSync(path.join(RENDERER_DIR, 'index.html'))) {
    throw new Error('The renderer is not built: run `npx electron-vite build` before the e2e tests.');
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-e2e-'));
  const keys = makeTestLicenseKeys();
  const config: Config = {
    ...defaultConfig(ROOT),
    host: '127.0.0.1',
    port: 0,
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    rendererDir: RENDERER_DIR,
    licensePublicKeyPem: keys.publicKeyPem,
    logLevel: 'silent',
  };
  const server = await startServer(config);
  return {
    url: server.url.endsWith('/') ? server.url : `${server.url}/`,
    dataDir,
    issueCode: (license) => issueTestCode(keys, license),
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
