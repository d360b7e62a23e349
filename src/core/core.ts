/**
 * The running core: config, clock, store, image store, analyzer and the domain services,
 * built once from a Config. Electron main, `npm run serve` and tests all start here;
 * tests pass their own clock, store or analyzer through `overrides`.
 */
import sharp from 'sharp';
import type { Analyzer } from './analysis/analyzer.js';
import { SwappableAnalyzer } from './analysis/swappable.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { AppError, isAppError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { AnalysisQueue } from './services/support/analysis-queue.js';
import { createCalibrationService, type CalibrationService } from './services/calibration.js';
import { LoginThrottle } from './services/login-throttle.js';
import { RegistrationThrottle } from './services/registration-throttle.js';
import { IDEMPOTENCY_TTL_MS } from './services/idempotency.js';
import { createServices } from './services/index.js';
import type { Services } from './services/ports.js';
import { createFileImageStore } from './storage/files.js';
import type { ImageStore } from './storage/images.js';
import { openStore } from './storage/index.js';
import type { Store } from './storage/store.js';

export interface Core {
  config: Config;
  clock: Clock;
  store: Store;
  images: ImageStore;
  /** Serves every analysis; a shop calibration swaps the models in it while the server runs. */
  analyzer: SwappableAnalyzer;
  services: Services;
  /** The shop calibration run from the Settings screen (swaps the models in `analyzer`). */
  calibration: CalibrationService;
  /** The analysis slots: scans, the shop calibration's re-reading and a hub's decode of pushed photos share them. */
  queue: AnalysisQueue;
  logger: Logger;
  /** Stops housekeeping, closes the analyzer and the store. Idempotent. */
  close(): Promise<void>;
}

export interface CoreOverrides {
  clock?: Clock;
  store?: Store;
  images?: ImageStore;
  analyzer?: Analyzer;
  logger?: Logger;
}

/** A hold older than this was left by a crash: no analysis takes ten minutes. */
export const RESERVATION_MAX_AGE_MS = 10 * 60 * 1000;
export const HOUSEKEEPING_INTERVAL_MS = 60 * 1000;

/** Drop stale holds, expired sessions, day-old idempotency records and stale throttle entries. */
export async function housekeeping(core: Pick<Core, 'store' | 'clock'>, ...throttles: Array<{ prune(now: number): void }>): Promise<void> {
  const now = core.clock.now();
  await core.store.usage.expireReservations(new Date(now.getTime() - RESERVATION_MAX_AGE_MS));
  await core.store.sessions.deleteExpired(now);
  await core.store.idempotency.deleteExpired(new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
  for (const throttle of throttles) throttle.prune(now.getTime());
}

/**
 * Loaded on demand so a core built with a fake analyzer never loads onnxruntime's native module.
 * Models that fail to load do not stop the server: history, accounts and licenses keep working
 * and every analysis answers MODEL_UNAVAILABLE (docs/API.md §3) while the log says why.
 */
export async function loadOnnxAnalyzer(
  modelsDir: string,
  logger: Logger,
  source: Config['modelsDirSource'] = 'shipped',
  platform: NodeJS.Platform = process.platform,
): Promise<Analyzer> {
  try {
    const { createOnnxAnalyzer } = await import('./analysis/index.js');
    return await createOnnxAnalyzer({ modelsDir, logger });
  } catch (error) {
    logger.error({ err: error, modelsDir }, 'tread models failed to load; analyses will answer MODEL_UNAVAILABLE');
    const message = modelLoadFailure(error, platform, source);
    return {
      modelVersion: 'unavailable',
      analyze: async () => {
        throw new AppError('MODEL_UNAVAILABLE', message);
      },
      close: async () => {},
    };
  }
}

/**
 * What a shop is told when the models did not load, by cause: the runtime's native library could
 * not be loaded (on Windows most often the Microsoft Visual C++ runtime that onnxruntime needs and
 * Windows does not include), or the models themselves (missing, corrupt: the manifest check's own
 * words, with what brings good ones back for where they came from: the installation, a shop
 * calibration chosen in Settings, or TIREWEAR_MODELS_DIR), or anything else (the log has it).
 */
export function modelLoadFailure(error: unknown, platform: NodeJS.Platform, source: Config['modelsDirSource'] = 'shipped'): string {
  const text = error instanceof Error ? error.message : String(error);
  const native =
    (error as { code?: unknown } | null)?.code === 'ERR_DLOPEN_FAILED' ||
    /specified module could not be found|cannot open shared object|dlopen|Library not loaded/i.test(text);
  if (native && platform === 'win32') {
    return (
      'The analysis runtime could not be loaded. The usual cause is a missing Microsoft Visual C++ 2015-2022 ' +
      'Redistributable (x64): install it from https://aka.ms/vs/17/release/vc_redist.x64.exe, then restart TireWear. ' +
      'The server log names the file that failed.'
    );
  }
  if (native) return `The analysis runtime could not be loaded (${text.split('\n')[0]}); reinstall TireWear. The server log has the details.`;
  if (isAppError(error)) {
    const remedy = {
      shipped: 'Reinstall TireWear to restore the models that came with it.',
      settings: 'These are a shop calibration: choose "Back to the models as shipped" in Settings, then calibrate again if you wish.',
      env: 'They come from TIREWEAR_MODELS_DIR: point it at a good models folder, or unset it to use the models that came with TireWear.',
    }[source];
    return `${error.message} ${remedy}`;
  }
  return 'The tread models could not be loaded; the server log says why. Restart TireWear, or reinstall it.';
}

export async function createCore(config: Config, overrides: CoreOverrides = {}): Promise<Core> {
  // libvips caches recent operations and their pixels (50 MB by default) for re-use; a server
  // never sees the same upload twice, so the cache only holds memory. Off: the peak RSS at
  // 16 concurrent 3 MP WebP uploads fell from 456 to 370 MB (docs/PERFORMANCE.md).
  sharp.cache(false);
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger({ level: config.logLevel });
  const store = overrides.store ?? (await openStore(config, clock, logger));
  try {
    const images = overrides.images ?? createFileImageStore(config.imagesDir);
    const analyzer = new SwappableAnalyzer(overrides.analyzer ?? (await loadOnnxAnalyzer(config.modelsDir, logger, config.modelsDirSource)));
    const loginThrottle = new LoginThrottle();
    const registrationThrottle = new RegistrationThrottle(config.registrationsPerHour);
    // one set of analysis slots for the scans and the shop calibration's re-reading
    const queue = new AnalysisQueue(config.analysisConcurrency, config.analysisQueueLimit);
    const services = createServices({
      store,
      images,
      analyzer,
      clock,
      logger,
      licensePublicKeyPem: config.licensePublicKeyPem,
      analysisConcurrency: config.analysisConcurrency,
      analysisQueueLimit: config.analysisQueueLimit,
      queue,
      loginThrottle,
      registrationThrottle,
      registration: config.registration,
    });

    const calibration = createCalibrationService({ config, store, images, analyzer, queue, clock, logger });

    const timer = setInterval(() => {
      housekeeping({ store, clock }, loginThrottle, registrationThrottle).catch((error: unknown) => logger.warn({ err: error }, 'housekeeping failed'));
    }, HOUSEKEEPING_INTERVAL_MS);
    timer.unref();

    let closing: Promise<void> | null = null;
    return {
      config,
      clock,
      store,
      images,
      analyzer,
      services,
      calibration,
      queue,
      logger,
      close() {
        closing ??= (async () => {
          clearInterval(timer);
          try {
            await calibration.close();
            await analyzer.close();
          } finally {
            await store.close();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
