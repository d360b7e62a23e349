/**
 * POST /analyze, in this order: idempotency claim → image validation → reserve an
 * allowance unit (429) → queued analysis, with the image and thumbnail written meanwhile →
 * both files flushed → one store commit (charge, scan, idempotent response) → response.
 * Whatever fails after the claim gives the unit back, deletes what was written (once its
 * write has settled) and forgets the claim, so a failure costs the caller nothing and loses
 * nothing.
 */
import { DISCLAIMER } from '../analysis/disclaimer.js';
import type { Analyzer } from '../analysis/analyzer.js';
import type { Clock } from '../clock.js';
import { AppError, isAppError } from '../errors.js';
import { checkImageHeader, decodeFrame, extensionFor, makeThumbnail } from '../images/inspect.js';
import type { Logger } from '../logger.js';
import type { ImageStore } from '../storage/images.js';
import type { Reservation, Store } from '../storage/store.js';
import { TIRE_POSITIONS, type ScanRecord, type ScanResult, type TirePosition } from '../types.js';
import { VEHICLE_MAX } from '../../shared/contract/limits.js';
import type { AnalysisQueue } from './support/analysis-queue.js';
import { randomId, sha256Hex } from './support/ids.js';
import { imageKeys } from './support/image-keys.js';
import { ImageWrites } from './support/image-writes.js';
import { claimIdempotencyKey, type IdempotencyClaim } from './idempotency.js';
import { rateLimitHeaders, type Metering } from './metering.js';
import type { AnalyzeCommand, AnalyzeResponse } from './ports.js';

export interface AnalyzeDeps {
  store: Store;
  images: ImageStore;
  analyzer: Analyzer;
  clock: Clock;
  queue: AnalysisQueue;
  metering: Metering;
  logger: Logger;
}

export function checkVehicle(vehicle: string | null): string | null {
  if (vehicle === null) return null;
  const trimmed = vehicle.trim();
  if (trimmed.length > VEHICLE_MAX || /\p{Cc}/u.test(trimmed)) {
    throw new AppError('VALIDATION_ERROR', `vehicle must be at most ${VEHICLE_MAX} printable characters.`);
  }
  return trimmed || null;
}

export function checkPosition(position: string | null): TirePosition | null {
  if (position === null || position === '') return null;
  if (!(TIRE_POSITIONS as readonly string[]).includes(position)) {
    throw new AppError('VALIDATION_ERROR', `position must be one of ${TIRE_POSITIONS.join(', ')}.`);
  }
  return position as TirePosition;
}

async function run(deps: AnalyzeDeps, command: AnalyzeCommand): Promise<AnalyzeResponse> {
  const { caller } = command;
  const vehicle = checkVehicle(command.vehicle);
  const position = checkPosition(command.position);
  let claim: IdempotencyClaim | null = null;
  // An Idempotency-Key's claim needs the hash first; otherwise it is computed in the queue slot,
  // while the thread pool decodes and the event loop would be idle (≈ 2 ms for 12 MP).
  let claimHash: string | null = null;
  if (command.idempotencyKey !== null) {
    claimHash = sha256Hex(command.image);
    const request = { image: claimHash, vehicle, position, verbose: command.verbose };
    const outcome = await claimIdempotencyKey(deps, caller, command.idempotencyKey, request);
    if ('replay' in outcome) {
      // A replay must not hand the POS a scan id that names nothing: say it was deleted since.
      const { scanId } = outcome.replay.body.data;
      const stored = await deps.store.scans.get(scanId);
      if (!stored || stored.deletedAt) {
        throw new AppError(
          'CONFLICT',
          `The scan this Idempotency-Key made (${scanId}) has been deleted since, and its result with it; ` +
            'to analyse the photo again, send it with a new Idempotency-Key.',
        );
      }
      // The stored answer, but the allowance as it stands now: the stored figures are a day old at most, not current.
      const state = await deps.metering.state(caller, deps.clock.now());
      return {
        ...outcome.replay,
        headers: { ...outcome.replay.headers, ...rateLimitHeaders(state), 'Idempotent-Replayed': 'true' },
      };
    }
    claim = outcome.claim;
  }

  let reservation: Reservation | null = null;
  const writes = new ImageWrites(deps.images);
  /** Set when a failed commit may still have stored the scan (it could not be read back): its files stay. */
  let keepFiles = false;
  try {
    const image = await checkImageHeader(command.image);
    reservation = await deps.metering.reserve(caller, deps.clock.now());
    const scanId = randomId();
    const keys = imageKeys(scanId, extensionFor(image.mime));
    // One decode per upload, inside the queue slot so a burst cannot start more decodes than
    // analyses: it proves the upload decodes (IMAGE_UNREADABLE otherwise) and feeds both the
    // thumbnail and the model input. Both files are written while the networks run (the disk
    // is idle otherwise), but only once the slot is taken: uploads waiting for a slot write
    // nothing, so a burst cannot crowd the thread pool the running decodes need with fsyncs,
    // nor leave files of uploads that never get analysed.
    const [outcome, originalWritten, thumbnailWritten, sha256] = await deps.queue.run(async () => {
      const original = writes.put(keys.originalKey, command.image);
      const decoding = decodeFrame(command.image, image);
      const hash = claimHash ?? sha256Hex(command.image);
      const frame = await decoding;
      const thumbnail = writes.track(
        keys.thumbnailKey,
        makeThumbnail(frame).then((data) => deps.images.put(keys.thumbnailKey, data)),
      );
      const analysis = await deps.analyzer.analyze({ image: command.image, verbose: command.verbose, frame });
      // The writes are awaited outside the slot: the next upload's decode need not wait for a disk.
      return [analysis, original, thumbnail, hash] as const;
    });

    const now = deps.clock.now();
    // Both files are complete and flushed before the scan that names them commits.
    // Reported before the commit: this analysis's own hold already counts as spent.
    const [state] = await Promise.all([deps.metering.state(caller, now), originalWritten, thumbnailWritten]);
    const result: ScanResult = {
      ...outcome.analysis,
      // Real elapsed time since the upload arrived (wall clock, like receivedAt), not the injected business clock.
      processingTimeMs: Math.max(0, Math.round(Date.now() - command.receivedAt)),
      disclaimer: DISCLAIMER,
    };
    const scan: ScanRecord = {
      id: scanId,
      accountId: caller.kind === 'account' ? caller.account.id : null,
      apiKeyId: caller.kind === 'account' ? caller.apiKeyId : null,
      source: caller.kind === 'account' ? caller.via : 'anonymous',
      createdAt: now,
      vehicle,
      position,
      result,
      image: { ...keys, mime: image.mime, width: image.width, height: image.height, bytes: image.bytes, sha256 },
      measurementMm: null,
      measuredAt: null,
      deletedAt: null,
      editedAt: null,
      changes: [],
    };
    const response: AnalyzeResponse = {
      status: 200,
      body: {
        success: true,
        data: { scanId, result: command.verbose && outcome.verbose ? { ...result, ...outcome.verbose } : result },
      },
      headers: rateLimitHeaders(state),
    };
    try {
      await deps.store.scans.commit({ scan, reservation, idempotency: claim ? { ...claim, response } : null });
    } catch (error) {
      // A commit that failed on its way back (PostgreSQL applied COMMIT, then the connection
      // dropped) stored the scan, its charge and its idempotency record together: answer it. When
      // that cannot be told, keep the files: the leftover sweep removes them only if no scan names them.
      const stored = await deps.store.scans.get(scanId).then(
        (found) => found !== null,
        () => null,
      );
      if (stored === true) return response;
      keepFiles = stored === null;
      throw error;
    }
    return response;
  } catch (error) {
    await undo(deps, reservation, keepFiles ? null : writes, claim);
    throw error;
  }
}

/** `writes` null: the files stay (a commit whose outcome is unknown may name them). */
async function undo(deps: AnalyzeDeps, reservation: Reservation | null, writes: ImageWrites | null, claim: IdempotencyClaim | null): Promise<void> {
  const steps: Array<Promise<unknown>> = [];
  if (reservation) steps.push(deps.store.usage.release(reservation.id));
  if (claim) steps.push(deps.store.idempotency.abandon(claim.callerKey, claim.key));
  const [released, removed] = await Promise.all([Promise.allSettled(steps), writes ? writes.removeAll() : []]);
  for (const step of [...released, ...removed]) {
    // Reservations expire and orphan files are harmless; the caller's own error matters more.
    if (step.status === 'rejected') deps.logger.warn({ err: step.reason }, 'cleanup after a failed analysis failed');
  }
}

/** Every analyze answer carries X-RateLimit-*, failures included (docs/API.md §4). */
export async function analyzeScan(deps: AnalyzeDeps, command: AnalyzeCommand): Promise<AnalyzeResponse> {
  try {
    return await run(deps, command);
  } catch (error) {
    if (isAppError(error) && !('X-RateLimit-Limit' in error.headers)) {
      try {
        Object.assign(error.headers, rateLimitHeaders(await deps.metering.state(command.caller, deps.clock.now())));
      } catch (stateError) {
        deps.logger.warn({ err: stateError }, 'could not read rate-limit state for an error response');
      }
    }
    throw error;
  }
}
