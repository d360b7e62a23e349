/** GET /scans/:id/overlays: the stored photo analysed again, verbose, for its overlays and points; nothing is stored or charged. */
import type { VerboseExtras } from '../analysis/analyzer.js';
import { AppError, isAppError } from '../errors.js';
import { checkImageHeader, decodeFrame } from '../images/inspect.js';
import type { ScanRecord } from '../types.js';
import type { AnalyzeDeps } from './analyze.js';

/** The analyzer's refusals of a photo: the models in use cannot read it (not a fault of the request). */
const UNREADABLE_BY_MODEL = new Set(['NO_TIRE_DETECTED', 'TREAD_NOT_VISIBLE']);

export async function readOverlays(deps: Pick<AnalyzeDeps, 'images' | 'queue' | 'analyzer'>, scan: ScanRecord): Promise<VerboseExtras> {
  const photo = await deps.images.get(scan.image.originalKey).catch((error: unknown) => {
    if (isAppError(error) && error.code === 'NOT_FOUND') {
      throw new AppError('NOT_FOUND', 'The photo of this scan is no longer stored, so its overlays cannot be made.');
    }
    throw error;
  });
  // a whole analysis, in the analyses' queue (SERVER_BUSY when full) as a scan's; nothing is stored or charged
  const outcome = await deps.queue
    .run(async () => {
      const header = await checkImageHeader(photo).catch((error: unknown) => {
        // the file was checked when it was stored: whatever fails now (415, 422) is the stored file's fault
        if (isAppError(error) && error.code !== 'SERVER_BUSY') {
          throw new AppError('IMAGE_UNREADABLE', 'The stored photo of this scan cannot be read, so its overlays cannot be made.');
        }
        throw error;
      });
      const frame = await decodeFrame(photo, header);
      return deps.analyzer.analyze({ image: photo, verbose: true, frame });
    })
    .catch((error: unknown) => {
      if (isAppError(error) && UNREADABLE_BY_MODEL.has(error.code)) {
        throw new AppError(
          error.code,
          `The current model version (${deps.analyzer.modelVersion}) cannot read this stored photo, so its overlays cannot be made: ` +
            `${error.message} The scan's result (model ${scan.result.modelVersion}) stays as stored.`,
        );
      }
      throw error;
    });
  return { overlays: outcome.verbose?.overlays ?? {}, points: outcome.verbose?.points ?? [] };
}
