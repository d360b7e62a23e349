import path from 'node:path';
import { defaultConfig, type Config } from '../../src/core/config.js';

/**
 * The config of a test core or server on its own `dataDir`: silent, no renderer, trusting the
 * license key `licensePublicKeyPem`. Models come from `root`/models (the test's data dir by
 * default, where none are: tests run the FakeAnalyzer; a bench passes the repository).
 */
export function testConfig(dataDir: string, licensePublicKeyPem: string, overrides: Partial<Config> = {}, root = dataDir): Config {
  return {
    ...defaultConfig(root),
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    rendererDir: null,
    licensePublicKeyPem,
    logLevel: 'silent',
    ...overrides,
  };
}
