/**
 * A deterministic Analyzer for service and HTTP tests. Its numbers come from the image
 * (mean luminance → depth), so different photos give different results and the same photo
 * the same result. It can be told to fail, or to wait until released (concurrency tests).
 */
import sharp from 'sharp';
import {
  MM_PER_32ND,
  treadHealthIndex,
  wearForDepth,
  type AnalyzeOutcome,
  type AnalyzeRequest,
  type Analyzer,
  type SceneReading,
} from '../../src/core/analysis/analyzer.js';
import { AppError } from '../../src/core/errors.js';

export const FAKE_MODEL_VERSION = 'fake-2026.11.0';

/** 1×1 transparent PNG: the verbose overlays only need to be well-formed data URLs. */
const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export class FakeAnalyzer implements Analyzer {
  readonly modelVersion = FAKE_MODEL_VERSION;
  /** Analyses started (including failed ones). */
  calls = 0;
  /** Analyses currently inside analyze(). */
  active = 0;
  closed = false;
  private failure: (() => Error) | null = null;
  /** What the scene reader sees in every photo (setScene), as the real gate would. */
  private sceneSeen: SceneReading['scene'] = 'tread';
  /** scene() calls made (the live capture check). */
  sceneCalls = 0;
  /**
   * Whether analyze() gives features when asked (AnalyzeRequest.features), as scene models since
   * tread-2026.11.29.4 do: the photo's mean luminance and its spread (each / 255), and the spread's square.
   */
  givesFeatures = false;

  /**
   * The gate alone, as the ONNX analyzer's: the outcome set by setScene, with probabilities that
   * favour it. Set to undefined (withoutSceneReader) to stand for models that have no scene reader.
   */
  scene?: (request: AnalyzeRequest) => Promise<SceneReading> = async () => {
    this.sceneCalls++;
    const p = { tread: 0.05, treadNotVisible: 0.05, noTire: 0.05 };
    if (this.sceneSeen === 'tread') p.tread = 0.9;
    else if (this.sceneSeen === 'tread_not_visible') p.treadNotVisible = 0.9;
    else p.noTire = 0.9;
    return { scene: this.sceneSeen, probabilities: p };
  };

  /**
   * Every following photo shows this scene: scene() reports it, and analyze() refuses a photo
   * without a readable tread as the real analyzer does (NO_TIRE_DETECTED, TREAD_NOT_VISIBLE).
   */
  setScene(scene: SceneReading['scene']): void {
    this.sceneSeen = scene;
  }

  /** Models without a scene reader (the capture check answers scene "unknown"). */
  withoutSceneReader(): void {
    this.scene = undefined;
  }
  private gate: Promise<void> | null = null;
  private startedWaiters: Array<{ count: number; resolve: () => void }> = [];

  /** Every following analysis throws this (default NO_TIRE_DETECTED) until `succeed()`. */
  fail(error: () => Error = () => new AppError('NO_TIRE_DETECTED', 'No tire tread was found in the image.')): void {
    this.failure = error;
  }

  succeed(): void {
    this.failure = null;
  }

  /** Following analyses wait inside analyze() until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.gate = null;
      release();
    };
  }

  /** Resolves once `count` analyses have started in total. */
  started(count: number): Promise<void> {
    if (this.calls >= count) return Promise.resolve();
    return new Promise((resolve) => this.startedWaiters.push({ count, resolve }));
  }

  async analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome> {
    this.calls++;
    this.active++;
    for (const waiter of this.startedWaiters.filter((w) => this.calls >= w.count)) waiter.resolve();
    this.startedWaiters = this.startedWaiters.filter((w) => this.calls < w.count);
    try {
      if (this.gate) await this.gate;
      if (this.failure) throw this.failure();
      if (this.sceneSeen === 'no_tire') throw new AppError('NO_TIRE_DETECTED', 'No tire tread was found in the image.');
      if (this.sceneSeen === 'tread_not_visible') {
        throw new AppError('TREAD_NOT_VISIBLE', 'A tire is in the photo but its tread cannot be read: photograph the tread face, close and sharp.');
      }
      const meta = await sharp(request.image).metadata();
      const swapped = (meta.orientation ?? 1) >= 5;
      const width = (swapped ? meta.height : meta.width) ?? 0;
      const height = (swapped ? meta.width : meta.height) ?? 0;
      const stats = await sharp(request.image).greyscale().stats();
      const luminance = stats.channels[0]?.mean ?? 0;
      const depth = Math.round((1 + (luminance / 255) * 8.5) * 10) / 10;
      const spread = Math.round((0.4 + (stats.channels[0]?.stdev ?? 0) / 255) * 10) / 10;
      const analysis = {
        wear: wearForDepth(depth),
        confidence: Math.round((0.5 + (luminance % 50) / 100) * 100) / 100,
        estimatedDepthMm: depth,
        depthRangeMm: { min: Math.max(0, Math.round((depth - spread) * 10) / 10), max: Math.round((depth + spread) * 10) / 10 },
        treadHealthIndex: treadHealthIndex(depth),
        isPreliminary: luminance < 40,
        preliminaryReasons: luminance < 40 ? ['tread_barely_visible' as const] : [],
        modelAlignment: Math.round(60 + (luminance % 40)),
        twiConsensusCount: Math.round(luminance) % 4,
        modelVersion: FAKE_MODEL_VERSION,
        depth32nds: Math.round(depth / MM_PER_32ND),
      };
      const contrast = (stats.channels[0]?.stdev ?? 0) / 255;
      const features = request.features && this.givesFeatures ? { features: Float32Array.from([luminance / 255, contrast, contrast ** 2]) } : {};
      if (!request.verbose) return { analysis, ...features };
      return {
        analysis,
        ...features,
        verbose: {
          overlays: { depthHeatmap: TINY_PNG, mask: TINY_PNG },
          points: [
            { kind: 'groove', x: Math.round(width / 3), y: Math.round(height / 2), index: 0 },
            { kind: 'twi', x: Math.round(width / 2), y: Math.round(height / 2) },
          ],
        },
      };
    } finally {
      this.active--;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
