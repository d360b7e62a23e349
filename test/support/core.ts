/**
 * A real Core for service and HTTP tests: SQLite and images in a fresh temp data dir,
 * test license keys, a ManualClock and the FakeAnalyzer unless others are given.
 * Call cleanup() (closes the core, removes the dir) in afterEach/afterAll.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Analyzer } from '../../src/core/analysis/analyzer.js';
import { ManualClock, type Clock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config.js';
import { testConfig } from './config.js';
import { createCore, type Core } from '../../src/core/core.js';
import type { Store } from '../../src/core/storage/store.js';
import { createLogger } from '../../src/core/logger.js';
import type { ImageStore } from '../../src/core/storage/images.js';
import { FakeAnalyzer } from './fake-analyzer.js';
import { issueTestCode, makeTestLicenseKeys, type TestLicense, type TestLicenseKeys } from './licenses.js';

export interface TestCore<C extends Clock = ManualClock, A extends Analyzer = FakeAnalyzer> {
  core: Core;
  clock: C;
  analyzer: A;
  config: Config;
  dataDir: string;
  licenseKeys: TestLicenseKeys;
  /** A license code signed with this core's trusted test key. */
  issueCode(license?: TestLicense): string;
  cleanup(): Promise<void>;
}

let sharedKeys: TestLicenseKeys | null = null;

export async function testCore<C extends Clock = ManualClock, A extends Analyzer = FakeAnalyzer>(
  options: { clock?: C; analyzer?: A; config?: Partial<Config>; images?: ImageStore; store?: Store } = {},
): Promise<TestCore<C, A>> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-core-'));
  sharedKeys ??= makeTestLicenseKeys();
  const licenseKeys = sharedKeys;
  const clock = options.clock ?? (new ManualClock() as unknown as C);
  const analyzer = options.analyzer ?? (new FakeAnalyzer() as unknown as A);
  const config = testConfig(dataDir, licenseKeys.publicKeyPem, {
    // Suites register many accounts from 127.0.0.1 on one core; the throttle's own tests set a low limit.
    registrationsPerHour: 1000,
    ...options.config,
  });
  const logger = createLogger({ level: 'silent' });
  const core = await createCore(config, {
    clock,
    analyzer,
    logger,
    ...(options.images ? { images: options.images } : {}),
    ...(options.store ? { store: options.store } : {}),
  });
  return {
    core,
    clock,
    analyzer,
    config,
    dataDir,
    licenseKeys,
    issueCode: (license) => issueTestCode(licenseKeys, license),
    async cleanup() {
      await core.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
