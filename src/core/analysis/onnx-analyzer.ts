/**
 * The production Analyzer: four ONNX networks in onnxruntime-node (the scene reader, which gates
 * and gives the result since tread-2026.11.28 (scene.ts), and the renders-only regressor, segmenter
 * and crop reader; older manifests lack the scene reader or the crop reader), created once,
 * warmed up, then shared by every request. Decoding runs concurrently in
 * sharp's thread pool; network runs go through one queue so that concurrent
 * requests never oversubscribe the CPU and each run sees the whole thread budget.
 */
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { AppError } from '../errors.js';
import type { AnalyzeOutcome, AnalyzeRequest, Analyzer, SceneReading } from './analyzer.js';
import { combine, stackedEstimate, treadShare, type TreadOutput } from './combine.js';
import { loadManifest, readVerifiedModels, type Manifest } from './manifest.js';
import { findTwiBars, mapsFromSeg, onlyWhere, treadBox, type MaskMaps } from './mask.js';
import { buildVerbose } from './overlays.js';
import { analysisInput, cellOnPhoto, cropPixels, normalise } from './preprocess.js';
import { refuseUnlessTread, sceneOf, sceneResult, type SceneOutput } from './scene.js';

export interface OnnxAnalyzerOptions {
  modelsDir: string;
  /** Threads per network run; defaults to the machine's cores, at most 4. */
  threads?: number;
  logger?: { info(o: object, msg?: string): void; warn(o: object, msg?: string): void };
}

/** What the networks say about one image, before any calibration. */
export interface RawOutputs {
  tread: TreadOutput;
  maps: MaskMaps;
  /** The regressor's reading of the tread crop; null without one. */
  cropMm: number | null;
}

/** A normalised 3 x size x size image mirrored left to right. */
export function mirrored(image: Float32Array, size: number): Float32Array {
  const out = new Float32Array(image.length);
  for (let row = 0; row < image.length; row += size) {
    for (let x = 0; x < size; x++) out[row + x] = image[row + size - 1 - x]!;
  }
  return out;
}

/**
 * One reading from the photo's and its mirror image's: means, and the sigma of the two
 * Gaussians' mean variance (models/training/finalize.py mirror_average, TreadNetExport "photo").
 */
export function mirrorAverage(a: TreadOutput, b: TreadOutput): TreadOutput {
  return {
    gate: (a.gate + b.gate) / 2,
    depthMm: (a.depthMm + b.depthMm) / 2,
    sigmaMm: Math.sqrt((a.sigmaMm ** 2 + b.sigmaMm ** 2) / 2),
    wearLogits: a.wearLogits.map((v, i) => (v + (b.wearLogits[i] ?? v)) / 2),
  };
}

async function createSession(bytes: Buffer, threads: number, name: string): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(bytes, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      // Idle pool threads would otherwise spin between runs, taking the cores sharp needs to
      // decode the next upload: with spinning, decode + inference of a 12 MP JPEG took 104 ms
      // on 2 cores instead of 38 ms (bench, docs/PERFORMANCE.md).
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
  } catch (error) {
    throw new AppError('MODEL_UNAVAILABLE', `Model ${name} could not be loaded by onnxruntime.`, { cause: error });
  }
}

function output(o: ort.InferenceSession.OnnxValueMapType, name: string): Float32Array {
  const v = o[name];
  if (!v || !(v.data instanceof Float32Array)) throw new AppError('MODEL_UNAVAILABLE', `Model output ${name} is missing.`);
  return v.data;
}

export class OnnxAnalyzer implements Analyzer {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Whether the scene reader gives worn_logit (scene models since tread-2026.11.28.2; scene.ts SceneOutput.wornLogit): looked up once. */
  private readonly sceneWornLogit: boolean;
  /** Whether the scene reader gives support (scene models since tread-2026.11.29.3; scene.ts SceneOutput.support). */
  private readonly sceneSupport: boolean;
  /** Whether the scene reader gives its pooled features (scene models since tread-2026.11.29.4; a shop's reader reads them, shop-reader.ts). */
  private readonly sceneFeatures: boolean;

  private constructor(
    readonly manifest: Manifest,
    private readonly tread: ort.InferenceSession,
    private readonly seg: ort.InferenceSession,
    /** The regressor trained on tread crops, when the manifest has one; else `tread` reads the crop. */
    private readonly cropReader: ort.InferenceSession | null = null,
    /** The scene reader (gate and real-photo wear), when the manifest has one (since tread-2026.11.28). */
    readonly sceneReader: ort.InferenceSession | null = null,
  ) {
    this.sceneWornLogit = sceneReader?.outputNames.includes('worn_logit') ?? false;
    this.sceneSupport = sceneReader?.outputNames.includes('support') ?? false;
    this.sceneFeatures = sceneReader?.outputNames.includes('features') ?? false;
  }

  get modelVersion(): string {
    return this.manifest.version;
  }

  static async create(options: OnnxAnalyzerOptions): Promise<OnnxAnalyzer> {
    const started = Date.now();
    const manifest = await loadManifest(options.modelsDir);
    const bytes = await readVerifiedModels(options.modelsDir, manifest);
    const threads = Math.max(1, Math.floor(options.threads ?? Math.min(4, availableParallelism())));
    const created = await Promise.allSettled([
      createSession(bytes.tread, threads, manifest.models.tread.file),
      createSession(bytes.seg, threads, manifest.models.seg.file),
      bytes.crop && manifest.models.crop ? createSession(bytes.crop, threads, manifest.models.crop.file) : null,
      bytes.scene && manifest.models.scene ? createSession(bytes.scene, threads, manifest.models.scene.file) : null,
    ]);
    const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // the sessions that did load hold native memory and threads: release them before failing
      await Promise.all(created.map((r) => (r.status === 'fulfilled' && r.value ? r.value.release().catch(() => undefined) : Promise.resolve())));
      throw failed.reason;
    }
    const [tread, seg, cropReader, sceneReader] = created.map((r) => (r as PromiseFulfilledResult<ort.InferenceSession | null>).value) as [
      ort.InferenceSession,
      ort.InferenceSession,
      ort.InferenceSession | null,
      ort.InferenceSession | null,
    ];
    const analyzer = new OnnxAnalyzer(manifest, tread, seg, cropReader, sceneReader);
    const size = manifest.input.size;
    const blank = new Float32Array(3 * size * size);
    const cropBlank = new Float32Array(3 * analyzer.cropSize ** 2);
    // warms every session, the crop reader included, so the first upload pays no start-up cost;
    // a network that refuses the manifest's input sizes fails here, not on the first upload
    try {
      await analyzer.infer(blank, manifest.calibration.crop ? () => cropBlank : undefined);
      if (analyzer.sceneReader) {
        const reader = manifest.calibration.scene?.shopReader;
        const features = (await analyzer.readScene(blank, reader !== undefined)).features;
        // a shop's reader (shop-reader.ts) on a scene graph without its features, or with other ones
        if (reader && features?.length !== reader.weights.length) {
          throw new Error(`the shop reader takes ${reader.weights.length} features and the scene model gives ${features ? features.length : 'none'}`);
        }
      }
    } catch (error) {
      await analyzer.close();
      const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new AppError('MODEL_UNAVAILABLE', `The tread models failed their warm-up run (input ${size} px, crop ${analyzer.cropSize} px): ${detail}`, {
        cause: error,
      });
    }
    options.logger?.info({ modelVersion: manifest.version, threads, ms: Date.now() - started }, 'tread models loaded and warmed up');
    return analyzer;
  }

  /** Network runs go through one queue (see the file comment). */
  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.closed) throw new AppError('MODEL_UNAVAILABLE', 'The tread models have been shut down.');
      return job();
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Images the regressor has read so far (frames, their mirrors, crops), for tests and diagnostics. */
  treadRows = 0;

  /**
   * The side the tread crop is stretched to: the crop reader's own (models.crop.size, which may be
   * larger than the whole frame's input), or the input size when the tread network reads the crop.
   */
  get cropSize(): number {
    return this.cropReader && this.manifest.models.crop ? this.manifest.models.crop.size : this.manifest.input.size;
  }

  /** A regressor (the tread network or the crop reader) on a batch of normalised 3 x size x size images: one reading per image. */
  private async runTread(images: Float32Array[], session: ort.InferenceSession = this.tread, size = this.manifest.input.size): Promise<TreadOutput[]> {
    const plane = 3 * size * size;
    const batch = new Float32Array(images.length * plane);
    images.forEach((image, i) => batch.set(image, i * plane));
    this.treadRows += images.length;
    const t = await session.run({ input: new ort.Tensor('float32', batch, [images.length, 3, size, size]) });
    const gate = output(t, 'gate');
    const depth = output(t, 'depth');
    const sigma = output(t, 'sigma');
    const logits = output(t, 'wear_logits');
    const classes = logits.length / images.length;
    return images.map((_, i) => ({
      gate: gate[i]!,
      depthMm: depth[i]!,
      sigmaMm: sigma[i]!,
      wearLogits: Array.from(logits.subarray(i * classes, (i + 1) * classes)),
    }));
  }

  /**
   * Both networks on one normalised 1 x 3 x S x S frame. The segmenter runs first, so that
   * `crop(maps)` can cut the tread out for the regressor's second look; then one regressor batch
   * reads the frame, its mirror image (when the manifest says the app averages the two, since
   * tread-2026.11.9; older graphs mirror inside) and the crop, which is read as it is — or, when
   * the manifest lists a crop reader (a regressor trained on crops), that network reads the crop.
   */
  infer(tensor: Float32Array, crop?: (maps: MaskMaps) => Float32Array | null): Promise<RawOutputs> {
    return this.enqueue(async () => {
      const size = this.manifest.input.size;
      const s = await this.seg.run({ input: new ort.Tensor('float32', tensor, [1, 3, size, size]) });
      const probs = output(s, 'probs');
      const maps = mapsFromSeg(probs, output(s, 'depth_map'), Math.round(Math.sqrt(probs.length / 4)));
      const mirror = this.manifest.calibration.treadMirror;
      const cropped = crop?.(maps) ?? null;
      const shared = cropped && !this.cropReader ? [cropped] : [];
      const readings = await this.runTread([tensor, ...(mirror ? [mirrored(tensor, size)] : []), ...shared]);
      const tread = mirror ? mirrorAverage(readings[0]!, readings[1]!) : readings[0]!;
      let cropMm: number | null = null;
      if (cropped) {
        cropMm = this.cropReader ? (await this.runTread([cropped], this.cropReader, this.cropSize))[0]!.depthMm : readings[readings.length - 1]!.depthMm;
      }
      return { tread, maps, cropMm };
    });
  }

  /**
   * The scene reader on one normalised 1 x 3 x S x S frame (through the same queue as the other
   * networks); `features`: keep its pooled features too (a shop's reader, or a calibration, asks).
   */
  readScene(tensor: Float32Array, features = false): Promise<SceneOutput> {
    const session = this.sceneReader;
    if (!session) return Promise.reject(new AppError('MODEL_UNAVAILABLE', 'These models have no scene reader.'));
    return this.enqueue(async () => {
      const size = this.manifest.input.size;
      const o = await session.run({ input: new ort.Tensor('float32', tensor, [1, 3, size, size]) });
      const probs = output(o, 'scene');
      const wornLogit = this.sceneWornLogit ? { wornLogit: output(o, 'worn_logit')[0]! } : {};
      const support = this.sceneSupport ? { support: output(o, 'support')[0]! } : {};
      // copied: onnxruntime may reuse the output's buffer for the next run
      const kept = features && this.sceneFeatures ? { features: Float32Array.from(output(o, 'features')) } : {};
      return {
        probs: [probs[0]!, probs[1]!, probs[2]!],
        worn: output(o, 'worn')[0]!,
        ...wornLogit,
        ...support,
        ...kept,
        depthMm: output(o, 'depth')[0]!,
        sigmaMm: output(o, 'sigma')[0]!,
      };
    });
  }

  /** The gate alone (the live capture check): what the scene reader sees, no depth read. */
  async scene(request: AnalyzeRequest): Promise<SceneReading> {
    const cal = this.manifest.calibration.scene;
    if (!this.sceneReader || !cal)
      throw new AppError('MODEL_UNAVAILABLE', 'These models have no scene reader: the photo cannot be checked without reading it.');
    const { input } = await analysisInput(request, this.manifest.input);
    return sceneOf(await this.readScene(input.tensor), cal);
  }

  async analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome> {
    const spec = this.manifest.input;
    const cal = this.manifest.calibration;
    // One frame (the scan service's, or one decode to it) feeds both looks.
    const { frame, content, input } = await analysisInput(request, spec);
    // The scene reader gates first: a photo it refuses costs no other network run.
    const withFeatures = request.features === true || cal.scene?.shopReader !== undefined;
    const sceneOut = this.sceneReader && cal.scene ? await this.readScene(input.tensor, withFeatures) : null;
    if (sceneOut && cal.scene) refuseUnlessTread(sceneOf(sceneOut, cal.scene));
    // The second look: the box around the tread the segmenter found, taken from the frame at its
    // own resolution (more pixels on the tread when it fills little of the photo). Not for a frame
    // with too little tread to count as a tire photo.
    const raw = await this.infer(input.tensor, (maps) => {
      if (!cal.crop || treadShare(maps) < cal.minTreadShare) return null;
      const box = treadBox(maps, frame.width, frame.height, cal.crop);
      return box ? normalise(cropPixels(frame, box, this.cropSize), { ...spec, size: this.cropSize }) : null;
    });
    const longSide = Math.max(frame.uprightWidth, frame.uprightHeight);
    // wear bars and grooves are looked for on the photo itself, never on a long photo's mirrored extension
    const extended = content.width !== frame.width || content.height !== frame.height;
    const photoMaps = extended ? onlyWhere(raw.maps, (cx, cy) => cellOnPhoto(cx, cy, raw.maps.side, frame, content) !== null) : raw.maps;
    let analysis;
    if (sceneOut && cal.scene) {
      const { stacked } = stackedEstimate(raw.tread, raw.maps, cal, raw.cropMm, longSide);
      const confirmedBars = findTwiBars(photoMaps).filter((b) => b.confirmed).length;
      analysis = sceneResult({ scene: sceneOut, syntheticMm: stacked, confirmedBars }, cal.scene);
    } else {
      analysis = combine(raw.tread, raw.maps, cal, raw.cropMm, longSide, photoMaps).analysis;
    }
    const outcome: AnalyzeOutcome = { analysis: { ...analysis, modelVersion: this.manifest.version } };
    if (request.features && sceneOut?.features) outcome.features = sceneOut.features;
    if (request.verbose) outcome.verbose = await buildVerbose(raw.maps, input, frame, content, photoMaps);
    return outcome;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await Promise.all([this.tread.release(), this.seg.release(), this.cropReader?.release(), this.sceneReader?.release()]);
  }
}

export function createOnnxAnalyzer(options: OnnxAnalyzerOptions): Promise<Analyzer> {
  return OnnxAnalyzer.create(options);
}
