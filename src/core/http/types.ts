/** What the HTTP layer needs from a running core, and what it adds to Fastify's types. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Analyzer } from '../analysis/analyzer.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { AnalysisQueue } from '../services/support/analysis-queue.js';
import type { CalibrationService } from '../services/calibration.js';
import type { Services } from '../services/ports.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import type { Caller } from '../types.js';
import type { StorageTrouble } from './storage-trouble.js';

/** The part of Core (src/core/core.ts) the server uses; a Core is one. */
export interface HttpCore {
  config: Config;
  clock: Clock;
  services: Services;
  logger: Logger;
  analyzer: Pick<Analyzer, 'modelVersion'>;
  store: Store;
  images: ImageStore;
  calibration: CalibrationService;
  /** The analysis slots (a hub decodes pushed photos in their background turn). */
  queue: Pick<AnalysisQueue, 'runBackground'>;
}

/**
 * Who may call a route. `none`: nobody is resolved (health, login). `optional`:
 * anonymous allowed. `account`: a session or an API key. `session`: the cookie
 * session only (key management). `desk`: the cookie session from this machine.
 */
export type AuthMode = 'none' | 'optional' | 'account' | 'session' | 'desk';

declare module 'fastify' {
  interface FastifyInstance {
    core: HttpCore;
    /** Storage failures of the last minute, for GET /health. */
    storageTrouble: StorageTrouble;
  }
  interface FastifyRequest {
    /** Set by the auth hook on routes whose auth mode is not `none`. */
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

/** The instance a route plugin gets (TypeBox types its schemas), for helpers that add routes to it. */
export type RouteApp = Parameters<FastifyPluginAsyncTypebox>[0];
