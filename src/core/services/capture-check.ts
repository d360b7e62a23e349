/**
 * POST /analyze/check (issue 42): is this webcam frame worth a scan? The scene reader of the
 * models (tread / a tire whose tread cannot be read / no tire), when they have one, plus
 * sharpness and light measured on the frame. It reads no depth, stores nothing and charges
 * nothing; a caller may ask CHECKS_PER_MINUTE times a minute (a live view asks about once a second).
 */
import sharp from 'sharp';
import type { CaptureCheck } from '../../shared/api.js';
import type { Analyzer, DecodedFrame } from '../analysis/analyzer.js';
import type { Clock } from '../clock.js';
import { isAppError } from '../errors.js';
import { checkImageHeader, decodeFrame } from '../images/inspect.js';
import type { Caller } from '../types.js';
import type { AnalysisQueue } from './support/analysis-queue.js';
import { perMinuteLimit } from './support/caller-limit.js';

export const CHECKS_PER_MINUTE = 120;

/** The grey frame sharpness is measured on: this long side, so the figure does not depend on the upload's size. */
export const MEASURE_LONG_SIDE = 400;
/**
 * Variance of the 4-neighbour Laplacian at MEASURE_LONG_SIDE from which a frame counts as sharp.
 * Measured on 25 + 25 real tread photos (michelin-twi, tyre-defect-ccby of shared/realdata):
 * as taken, 9 in 10 measured 149-190 or more (the least sharp 27 and 117); blurred by a Gaussian
 * of σ 4 px at their own size (about 2 px here) at most 14-19; of σ 2 px a median of 34-42.
 */
export const SHARPNESS_MIN = 40;
/** Mean luma (0-255) from which a frame counts as lit, and up to which it is not washed out. */
export const BRIGHTNESS_MIN = 45;
export const BRIGHTNESS_MAX = 220;

export interface FrameMeasures {
  sharpness: number;
  brightness: number;
}

/** Sharpness (variance of the Laplacian) and brightness (mean luma) of a decoded RGB frame. */
export async function measureFrame(frame: Pick<DecodedFrame, 'data' | 'width' | 'height'>): Promise<FrameMeasures> {
  const { data, info } = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(MEASURE_LONG_SIDE, MEASURE_LONG_SIDE, { fit: 'inside', withoutEnlargement: true })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const channels = info.channels;
  const grey = (x: number, y: number) => data[(y * width + x) * channels]!;
  let sumLuma = 0;
  for (let i = 0; i < width * height; i++) sumLuma += data[i * channels]!;
  let n = 0;
  let sum = 0;
  let sumSq = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const lap = grey(x - 1, y) + grey(x + 1, y) + grey(x, y - 1) + grey(x, y + 1) - 4 * grey(x, y);
      n++;
      sum += lap;
      sumSq += lap * lap;
    }
  }
  const mean = n > 0 ? sum / n : 0;
  const variance = n > 0 ? sumSq / n - mean * mean : 0;
  return { sharpness: Math.round(variance * 10) / 10, brightness: Math.round((sumLuma / Math.max(1, width * height)) * 10) / 10 };
}

const round3 = (p: number) => Math.round(p * 1000) / 1000;

/** The answer from the scene reading (null: the models have none) and the measures. */
export function judge(
  scene: Awaited<ReturnType<NonNullable<Analyzer['scene']>>> | null,
  measures: FrameMeasures,
  size: { width: number; height: number },
): CaptureCheck {
  const sharp = measures.sharpness >= SHARPNESS_MIN;
  const dark = measures.brightness < BRIGHTNESS_MIN;
  const bright = measures.brightness > BRIGHTNESS_MAX;
  const problems: CaptureCheck['problems'] = [];
  if (scene?.scene === 'no_tire') problems.push('no_tire');
  if (scene?.scene === 'tread_not_visible') problems.push('tread_not_visible');
  if (dark) problems.push('too_dark');
  if (bright) problems.push('too_bright');
  if (!sharp) problems.push('blurred');
  return {
    scene: scene?.scene ?? 'unknown',
    probabilities: scene
      ? {
          tread: round3(scene.probabilities.tread),
          treadNotVisible: round3(scene.probabilities.treadNotVisible),
          noTire: round3(scene.probabilities.noTire),
        }
      : null,
    sharpness: { value: measures.sharpness, minimum: SHARPNESS_MIN, ok: sharp },
    brightness: { value: measures.brightness, minimum: BRIGHTNESS_MIN, maximum: BRIGHTNESS_MAX, ok: !dark && !bright },
    ok: problems.length === 0,
    problems,
    width: size.width,
    height: size.height,
  };
}

export interface CaptureCheckDeps {
  analyzer: Analyzer;
  queue: AnalysisQueue;
  clock: Clock;
}

export interface CaptureCheckService {
  /** TOO_MANY_ATTEMPTS (429, Retry-After) once the caller asked CHECKS_PER_MINUTE times in the last minute; counts this one. */
  admit(caller: Caller): void;
  /** The image checks of analyze (415/422), then the check; SERVER_BUSY when the analysis queue is full. */
  check(image: Buffer): Promise<CaptureCheck>;
}

/**
 * The scene reading, or null (scene "unknown") when the models in use cannot give one: no scene
 * method, or one that answers MODEL_UNAVAILABLE (the ONNX analyzer does for models shipped without a
 * scene reader). The check is guidance: without the scene it still judges sharpness and light.
 */
async function readScene(analyzer: Analyzer, request: Parameters<NonNullable<Analyzer['scene']>>[0]) {
  if (!analyzer.scene) return null;
  try {
    return await analyzer.scene(request);
  } catch (error) {
    if (isAppError(error) && error.code === 'MODEL_UNAVAILABLE') return null;
    throw error;
  }
}

export function createCaptureCheckService(deps: CaptureCheckDeps): CaptureCheckService {
  const limit = perMinuteLimit(CHECKS_PER_MINUTE, 'capture checks');
  return {
    admit(caller) {
      limit(caller, deps.clock.now().getTime());
    },
    async check(image) {
      const header = await checkImageHeader(image);
      // in the analyses' queue: a live view cannot take the processor from the scans being made
      return deps.queue.run(async () => {
        const frame = await decodeFrame(image, header);
        const [measures, scene] = await Promise.all([measureFrame(frame), readScene(deps.analyzer, { image, verbose: false, frame })]);
        return judge(scene, measures, { width: header.width, height: header.height });
      });
    },
  };
}
