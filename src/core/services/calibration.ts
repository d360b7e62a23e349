/**
 * The shop calibration from the Settings screen: the models that came with the app read again
 * every scan of the account that has a gauge reading, the same fit as `npm run calibrate`
 * (analysis/shop-calibration.ts: a depth line and an interval width, or a reader of the shop's own
 * on the models' features, each kept only when 5-fold cross-validation confirms it), and, when something is kept, the calibrated models written to
 * `<dataDir>/calibrations/<version>`, named in settings.json (`modelsDir`, so the next start loads
 * them too) and swapped into the running server: no restart. Reverting removes the setting and
 * swaps the shipped models back; calibration folders are never deleted.
 *
 * The models a server runs with are the server's, not one account's: on a desktop that is the
 * shop. So the job is reached from the desk only (signed in at this computer), one at a time.
 * A server whose models are set by TIREWEAR_MODELS_DIR keeps them: calibrate with the CLI there.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { CalibrationFit, CalibrationStatus } from '../../shared/api.js';
import type { Analyzer } from '../analysis/analyzer.js';
import { readManifestJson } from '../analysis/calibration-files.js';
import { fitShopCalibrationWithReader, MIN_TIRES } from '../analysis/shop-calibration.js';
import type { SwappableAnalyzer } from '../analysis/swappable.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError, isAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { updateSettingsFile } from '../settings-file.js';
import type { ImageStore } from '../storage/images.js';
import type { Store } from '../storage/store.js';
import type { ScanRecord } from '../types.js';
import { activeCalibration, byModel, wireFit } from './calibration/figures.js';
import { LAST_JOB_KEY, parseKeptJob, type Finished, type Job, type Running } from './calibration/kept-job.js';
import { writeShopModels } from './calibration/models.js';
import { readPhotosAgain, type PhotoReadings } from './calibration/photos.js';
import type { AnalysisQueue } from './support/analysis-queue.js';

export interface CalibrationDeps {
  config: Pick<Config, 'dataDir' | 'modelsDir' | 'shippedModelsDir' | 'modelsDirSource'>;
  store: Store;
  images: ImageStore;
  analyzer: SwappableAnalyzer;
  /**
   * The scans' analysis slots: each photo is read in one, behind any scan waiting for one, so the
   * job adds no analysis beyond the configured concurrency (memory) and never delays the counter by
   * more than the photo in hand. Without it (tests) photos are read directly.
   */
  queue?: Pick<AnalysisQueue, 'runBackground'>;
  clock: Clock;
  logger: Logger;
  /** Loads models from a folder; throws (AppError MODEL_UNAVAILABLE) when they do not load. */
  loadAnalyzer?: (modelsDir: string) => Promise<Analyzer>;
}

export interface CalibrationService {
  status(accountId: string): Promise<CalibrationStatus>;
  /**
   * Checks, then starts the job in the background and returns at once. AppError CONFLICT (one is
   * running; models set by TIREWEAR_MODELS_DIR; the shipped models are a calibration themselves),
   * VALIDATION_ERROR (fewer than MIN_TIRES measured scans), MODEL_UNAVAILABLE (no shipped manifest).
   */
  start(accountId: string): Promise<CalibrationStatus>;
  /** Back to the shipped models. CONFLICT while a job runs; nothing to do is not an error. */
  revert(accountId: string): Promise<CalibrationStatus>;
  /** Resolves when the running job (if any) has finished: for tests. */
  idle(): Promise<void>;
  /** Stops a running job between two photos (nothing changed) and waits for it: for shutdown. */
  close(): Promise<void>;
}

/** At most this many reads of one status while the models keep being swapped under it (status()). */
const STATUS_READS = 4;

export function createCalibrationService(deps: CalibrationDeps): CalibrationService {
  const { config, store, images, analyzer, clock, logger } = deps;
  const load =
    deps.loadAnalyzer ??
    (async (modelsDir: string): Promise<Analyzer> => {
      const { createOnnxAnalyzer } = await import('../analysis/index.js');
      return createOnnxAnalyzer({ modelsDir, logger });
    });
  /** The folder the served models came from: config's at start, then each swap's. */
  let servedDir = config.modelsDir;
  /** Whether settings.json's modelsDir chose them (and a revert has something to undo). */
  let fromSettings = config.modelsDirSource === 'settings';
  let job: Job | null = null;
  let running: Promise<void> | null = null;
  let closing = false;
  /** Set while start() checks, so two clicks at once cannot both pass the checks. */
  let starting = false;
  /** The revert under way, if any: a second one waits for it; shutdown waits for it too. */
  let reverting: Promise<void> | null = null;

  const measured = (accountId: string) => store.scans.all({ accountId, measured: true });

  /** The last finished job from the store, read once before the first status, start or revert. */
  let restored: Promise<void> | null = null;
  const ready = () =>
    (restored ??= store.meta.get(LAST_JOB_KEY).then(
      (text) => {
        const kept = text === null ? null : parseKeptJob(text);
        if (job === null && kept !== null) job = kept;
      },
      (error: unknown) => logger.warn({ err: error }, 'could not read the last calibration job'),
    ));
  /** A failed write loses only the record of the outcome (the calibration itself is in settings.json). */
  const keep = (finished: Job | null) =>
    store.meta.set(LAST_JOB_KEY, JSON.stringify(finished)).catch((error: unknown) => logger.warn({ err: error }, 'could not keep the calibration job'));
  /** The shipped manifest, read once: the models that came with the app do not change while it runs (status is polled each second). */
  let shippedRead: Promise<Record<string, unknown> | null> | null = null;
  const shippedManifest = () => (shippedRead ??= readManifestJson(config.shippedModelsDir));

  /**
   * The served calibration's record, read again only when its manifest changed (another folder,
   * or a new file: a calibration's manifest is renamed into place). A shop's reader makes that
   * manifest about 0.85 MB of JSON, and the status is polled each second while Settings is open.
   */
  let activeRead: { key: string; record: Promise<CalibrationStatus['active']> } | null = null;
  async function active(): Promise<CalibrationStatus['active']> {
    const file = await stat(path.join(servedDir, 'manifest.json')).catch(() => null);
    const key = file ? `${servedDir}\0${file.ino}\0${file.size}\0${file.mtimeMs}` : `${servedDir}\0none`;
    if (activeRead?.key !== key) activeRead = { key, record: readManifestJson(servedDir).then(activeCalibration) };
    return activeRead.record;
  }

  const blockedBy = (): string | null =>
    config.modelsDirSource === 'env'
      ? `This server's models are set by TIREWEAR_MODELS_DIR (${config.modelsDir}) and stay as set; calibrate with npm run calibrate there.`
      : null;

  /** Why a calibration cannot start whatever the readings: the models chosen by the environment, or no shipped models to start from. */
  async function startBlockedBy(): Promise<AppError | null> {
    const blocked = blockedBy();
    if (blocked) return new AppError('CONFLICT', blocked);
    const base = await shippedManifest();
    if (base === null) return new AppError('MODEL_UNAVAILABLE', `The models that came with the app are missing (${config.shippedModelsDir}).`);
    if (base.shopCalibration !== undefined) {
      return new AppError('CONFLICT', `The models at ${config.shippedModelsDir} are a shop calibration already; start from the models as shipped.`);
    }
    return null;
  }

  async function status(accountId: string): Promise<CalibrationStatus> {
    await ready();
    for (let attempt = 1; ; attempt++) {
      const version = analyzer.modelVersion;
      const [scans, activeRecord, blocked] = await Promise.all([measured(accountId), active(), startBlockedBy()]);
      // a swap while reading (a job applying its models, a revert): read again, so that the model
      // in use, its record and the job's outcome always describe the same moment. Swaps are rare
      // (one per job or revert); should they keep coming, the last read is answered and the next
      // poll (each second) describes the moment after them.
      if (analyzer.modelVersion !== version && attempt < STATUS_READS) continue;
      return {
        modelVersion: version,
        active: activeRecord,
        measuredScans: scans.length,
        byModel: byModel(scans),
        minimumScans: MIN_TIRES,
        blockedBy: blocked?.message ?? null,
        canRevert: fromSettings && blockedBy() === null,
        job,
      };
    }
  }

  /** The outcome, kept in the store too so that a restart still shows it (a running job is not kept). */
  async function finish(
    startedAt: string,
    state: Finished['state'],
    message: string,
    fit: CalibrationFit | null = null,
    skipped: Record<string, number> = {},
  ): Promise<void> {
    job = { state, startedAt, finishedAt: clock.now().toISOString(), message, fit, skipped };
    await keep(job);
  }

  const checkOpen = () => {
    if (closing) throw new AppError('SERVER_BUSY', 'The server is shutting down.');
  };

  /** Read with the shipped models: the served ones when they are those (the first calibration), no second set in memory. */
  async function readAgain(scans: ScanRecord[], progress: Running, base: Record<string, unknown>): Promise<PhotoReadings> {
    const reuse = !fromSettings && servedDir === config.shippedModelsDir && analyzer.modelVersion === base.version;
    const reader = reuse ? analyzer : await load(config.shippedModelsDir);
    try {
      return await readPhotosAgain({ scans, reader, images, queue: deps.queue, progress, checkOpen });
    } finally {
      if (!reuse) await reader.close();
    }
  }

  /** The photos read, the fit, and (when something is kept) the new models written and swapped in. */
  async function run(scans: ScanRecord[], progress: Running): Promise<void> {
    const { startedAt } = progress;
    const base = (await shippedManifest()) ?? {};
    const { points, labels, skipped } = await readAgain(scans, progress, base);
    if (points.length < MIN_TIRES) {
      const message = `Only ${points.length} of ${scans.length} photos could be read again; at least ${MIN_TIRES} are needed. Nothing was changed.`;
      await finish(startedAt, 'failed', message, null, skipped);
      return;
    }
    progress.phase = 'fitting';
    const fit = await fitShopCalibrationWithReader(points);
    if (!fit.depthApplied && !fit.intervalApplied && !fit.readerApplied) {
      const message = `On these ${fit.tires} photos the models as shipped need no correction that cross-validation confirms. Nothing was changed.`;
      await finish(startedAt, 'unchanged', message, wireFit(fit), skipped);
      return;
    }
    progress.phase = 'writing';
    const { next, outDir, written } = await writeShopModels({ config, base, fit, created: clock.now(), labels, load, checkOpen });
    analyzer.swap(next);
    servedDir = outDir;
    fromSettings = true;
    logger.info({ modelVersion: next.modelVersion, modelsDir: outDir, tires: fit.tires }, 'shop calibration applied');
    await finish(startedAt, 'applied', `Calibrated on ${fit.tires} photos: analyses now answer with ${String(written.version)}.`, wireFit(fit), skipped);
  }

  /** settings.json's modelsDir removed and the shipped models swapped in; the last job's result no longer describes them. */
  async function backToShipped(): Promise<void> {
    if (!fromSettings) return;
    const shipped = await load(config.shippedModelsDir);
    try {
      checkOpen();
      await updateSettingsFile(config.dataDir, ({ modelsDir: _dropped, ...file }) => file);
    } catch (error) {
      await shipped.close();
      throw error;
    }
    analyzer.swap(shipped);
    logger.info({ modelVersion: shipped.modelVersion, from: servedDir }, 'back to the shipped models');
    servedDir = config.shippedModelsDir;
    fromSettings = false;
    if (job?.state === 'applied') {
      job = null;
      await keep(null);
    }
  }

  /** start() past the running check: the rest of the checks, then the job in the background. */
  async function begin(accountId: string): Promise<CalibrationStatus> {
    const blocked = await startBlockedBy();
    if (blocked) throw blocked;
    const scans = await measured(accountId);
    const count = scans.length;
    if (count < MIN_TIRES) {
      throw new AppError(
        'VALIDATION_ERROR',
        `${count} scan(s) have a gauge reading; a calibration needs at least ${MIN_TIRES} (a few hundred give a steadier one). Enter the gauge reading on a scan's page after measuring the tire.`,
      );
    }
    const startedAt = clock.now().toISOString();
    const progress: Running = { state: 'running', startedAt, phase: 'reading', done: 0, total: count };
    job = progress;
    running = run(scans, progress)
      .catch(async (error: unknown) => {
        logger.error({ err: error }, 'shop calibration failed');
        await finish(
          startedAt,
          'failed',
          `The calibration failed and nothing was changed: ${isAppError(error) ? error.message.replace(/\.$/, '') : 'see the server log'}.`,
        );
      })
      .finally(() => {
        running = null;
      });
    return status(accountId);
  }

  return {
    status,

    async start(accountId) {
      await ready();
      if (job?.state === 'running' || starting) throw new AppError('CONFLICT', 'A calibration is already running; wait for it to finish.');
      if (reverting) throw new AppError('CONFLICT', 'The shipped models are being put back; start again in a moment.');
      checkOpen();
      starting = true;
      try {
        return await begin(accountId);
      } finally {
        starting = false;
      }
    },

    async revert(accountId) {
      await ready();
      if (job?.state === 'running' || starting) throw new AppError('CONFLICT', 'A calibration is running; revert once it has finished.');
      checkOpen();
      const blocked = blockedBy();
      if (blocked) throw new AppError('CONFLICT', blocked);
      reverting ??= backToShipped().finally(() => {
        reverting = null;
      });
      await reverting;
      return status(accountId);
    },

    async idle() {
      await running;
    },

    async close() {
      closing = true;
      await Promise.all([running, reverting?.catch(() => undefined)]);
    },
  };
}
