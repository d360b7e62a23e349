/** Wires the domain services over one store, image store, analyzer and clock. */
import type { Analyzer } from '../analysis/analyzer.js';
import type { Clock } from '../clock.js';
import { loadLicensePublicKey } from '../licensing/codes.js';
import type { Logger } from '../logger.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import { createAccountService } from './accounts.js';
import { AnalysisQueue } from './support/analysis-queue.js';
import { createApiKeyService } from './api-keys.js';
import { createCaptureCheckService } from './capture-check.js';
import { createAuthService } from './auth.js';
import { createLicenseService } from './licenses.js';
import { LoginThrottle } from './login-throttle.js';
import { Metering } from './metering.js';
import type { Services } from './ports.js';
import { RegistrationThrottle } from './registration-throttle.js';
import { createScanService } from './scans.js';

export interface ServiceDeps {
  store: Store;
  images: ImageStore;
  analyzer: Analyzer;
  clock: Clock;
  logger: Logger;
  licensePublicKeyPem: string;
  analysisConcurrency: number;
  analysisQueueLimit: number;
  /** The queue in front of the analyzer, when something besides the scans needs its slots (the shop calibration). */
  queue?: AnalysisQueue;
  /** Shared with housekeeping, which prunes it. */
  loginThrottle?: LoginThrottle;
  /** Likewise; its limit comes from config.registrationsPerHour. */
  registrationThrottle?: RegistrationThrottle;
  /** Config.registration. */
  registration?: 'open' | 'first';
}

export function createServices(deps: ServiceDeps): Services {
  const { store, clock } = deps;
  const throttle = deps.loginThrottle ?? new LoginThrottle();
  const registrationThrottle = deps.registrationThrottle ?? new RegistrationThrottle();
  // one queue for the scans and the capture check: a live view cannot take slots the counter's scans need
  const queue = deps.queue ?? new AnalysisQueue(deps.analysisConcurrency, deps.analysisQueueLimit);
  return {
    auth: createAuthService({ store, clock, throttle, registrationThrottle, ...(deps.registration ? { registration: deps.registration } : {}) }),
    apiKeys: createApiKeyService({ store, clock }),
    accounts: createAccountService({ store, clock }),
    licenses: createLicenseService({ store, clock, publicKey: loadLicensePublicKey(deps.licensePublicKeyPem) }),
    scans: createScanService({
      store,
      images: deps.images,
      analyzer: deps.analyzer,
      clock,
      logger: deps.logger,
      metering: new Metering(store),
      queue,
    }),
    captureCheck: createCaptureCheckService({ analyzer: deps.analyzer, queue, clock }),
  };
}
