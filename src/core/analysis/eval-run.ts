/**
 * Labelled photos through the service's own path (upload checks, one decode to the frame, the
 * analysis on that frame), one by one: what `npm run eval` measures and `npm run calibrate` fits.
 */
import { readFile, stat } from 'node:fs/promises';
import { MAX_IMAGE_BYTES } from '../../shared/contract/limits.js';
import { isAppError } from '../errors.js';
import { inspectImage } from '../images/inspect.js';
import type { Analyzer } from './analyzer.js';
import type { Sample } from './eval-metrics.js';
import type { Labelled } from './eval-samples.js';

/**
 * Every sample's outcome, in order. A file removed or unreadable since the labels were checked is
 * counted (FILE_UNREADABLE, reported through `warn`), not fatal; an error that is not the
 * service's own (a bug) is thrown.
 */
export async function analyzeLabelled(
  analyzer: Analyzer,
  samples: Labelled[],
  warn: (line: string) => void,
  options: { features?: boolean } = {},
): Promise<Sample[]> {
  const results: Sample[] = [];
  for (const s of samples) {
    const started = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    // the upload limit applies before the file is read: a stray multi-gigabyte file listed in the
    // labels is counted as the service would answer it, not loaded into memory
    const size = (await stat(s.file).catch(() => null))?.size;
    if (size !== undefined && size > MAX_IMAGE_BYTES) {
      results.push({ ...s, outcome: { error: 'FILE_TOO_LARGE', ms: ms() } });
      continue;
    }
    const image = await readFile(s.file).catch((error: NodeJS.ErrnoException) => {
      warn(`cannot read ${s.file} (${error.code ?? error.message})`);
      return null;
    });
    if (!image) {
      results.push({ ...s, outcome: { error: 'FILE_UNREADABLE', ms: null } });
      continue;
    }
    try {
      const { frame } = await inspectImage(image);
      const { analysis, features } = await analyzer.analyze({ image, verbose: false, frame, features: options.features === true });
      results.push({ ...s, outcome: { analysis, ms: ms(), ...(features ? { features } : {}) } });
    } catch (error) {
      if (!isAppError(error)) throw error;
      results.push({ ...s, outcome: { error: error.code, ms: ms() } });
    }
  }
  return results;
}
