/** The calibration's first half: every measured scan's photo read again by the models as shipped. */
import type { Analyzer } from '../../analysis/analyzer.js';
import { pointFrom, type ShopPoint } from '../../analysis/shop-calibration.js';
import { isAppError } from '../../errors.js';
import { checkImageHeader, decodeFrame } from '../../images/inspect.js';
import type { ImageStore } from '../../storage/images.js';
import type { ScanRecord } from '../../types.js';
import type { AnalysisQueue } from '../support/analysis-queue.js';

export interface PhotoReadings {
  points: ShopPoint[];
  /** The readings the fit used, one line per scan read, for the record's labelsSha256. */
  labels: string;
  /** Photos that could not be read, by error code (PHOTO_MISSING for a photo no longer stored). */
  skipped: Record<string, number>;
}

export interface ReadAgain {
  scans: ScanRecord[];
  reader: Analyzer;
  images: ImageStore;
  /** The scans' analysis slots (CalibrationDeps.queue); without it photos are read directly. */
  queue?: Pick<AnalysisQueue, 'runBackground'> | undefined;
  /** Counts each photo as it is done (the running job's progress). */
  progress: { done: number };
  /** Throws once the server is shutting down. */
  checkOpen: () => void;
}

export async function readPhotosAgain({ scans, reader, images, queue, progress, checkOpen }: ReadAgain): Promise<PhotoReadings> {
  const readings: PhotoReadings = { points: [], labels: '', skipped: {} };
  for (const scan of scans) {
    checkOpen();
    try {
      const image = await images.get(scan.image.originalKey);
      // the service's own checks and decode, without the thumbnail a scan keeps
      // with the scene network's features, which a shop's own reader is fitted on (shop-reader.ts)
      const read = async () => reader.analyze({ image, verbose: false, features: true, frame: await decodeFrame(image, await checkImageHeader(image)) });
      const { analysis, features } = await (queue ? queue.runBackground(read) : read());
      readings.points.push(pointFrom(scan.measurementMm!, analysis, features));
      readings.labels += `${scan.id},${scan.measurementMm}\n`;
    } catch (error) {
      if (!isAppError(error)) throw error;
      const code = error.code === 'NOT_FOUND' ? 'PHOTO_MISSING' : error.code;
      readings.skipped[code] = (readings.skipped[code] ?? 0) + 1;
    }
    progress.done += 1;
    // inference is synchronous in onnxruntime-node: let waiting requests in between photos
    await new Promise((resolve) => setImmediate(resolve));
  }
  return readings;
}
