/**
 * The production Analyzer: two ONNX networks in onnxruntime-node, created once,
 * warmed up, then shared by every request. Decoding runs concurrently in
 * sharp's thread pool; network runs go through one queue so that concurrent
 * requests never oversubscribe the CPU and each run sees the whole thread budget.
 */
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { AppError } from '../errors.js';
import type { AnalyzeOutcome, AnalyzeRequest, Analyzer } from './analyzer.js';
import { decodeFrame } from '../images/inspect.js';
import { acceptsTire, combine, type TreadOutput } from './combine.js';
import { loadManifest, readVerifiedModels, type Manifest } from './manifest.js';
import { mapsFromSeg, treadBox, type MaskMaps } from './mask.js';
import { buildVerbose } from './overlays.js';
import { cropPixels, normalise, prepareFrameInput, uprightSize } from './preprocess.js';

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

  private constructor(
    readonly manifest: Manifest,
    private readonly tread: ort.InferenceSession,
    private readonly seg: ort.InferenceSession,
  ) {}

  get modelVersion(): string {
    return this.manifest.version;
  }

  static async create(options: OnnxAnalyzerOptions): Promise<OnnxAnalyzer> {
    const started = Date.now();
    const manifest = await loadManifest(options.modelsDir);
    const bytes = await readVerifiedModels(options.modelsDir, manifest);
    const threads = Math.max(1, Math.floor(options.threads ?? Math.min(4, availableParallelism())));
    const [tread, seg] = await Promise.all([
      createSession(bytes.tread, threads, manifest.models.tread.file),
      createSession(bytes.seg, threads, manifest.models.seg.file),
    ]);
    const analyzer = new OnnxAnalyzer(manifest, tread, seg);
    const size = manifest.input.size;
    await analyzer.infer(new Float32Array(3 * size * size));
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

  private tensor(data: Float32Array): ort.Tensor {
    const size = this.manifest.input.size;
    return new ort.Tensor('float32', data, [1, 3, size, size]);
  }

  /** Regressor runs so far (whole frames and crops), for tests and diagnostics. */
  treadRuns = 0;

  private async runTread(input: ort.Tensor): Promise<TreadOutput> {
    this.treadRuns++;
    const t = await this.tread.run({ input });
    return {
      gate: output(t, 'gate')[0]!,
      depthMm: output(t, 'depth')[0]!,
      sigmaMm: output(t, 'sigma')[0]!,
      wearLogits: Array.from(output(t, 'wear_logits')),
    };
  }

  /** Runs both networks on one normalised 1x3xSxS tensor. */
  infer(tensor: Float32Array): Promise<RawOutputs> {
    return this.enqueue(async () => {
      const input = this.tensor(tensor);
      const tread = await this.runTread(input);
      const s = await this.seg.run({ input });
      const probs = output(s, 'probs');
      const side = Math.round(Math.sqrt(probs.length / 4));
      return { tread, maps: mapsFromSeg(probs, output(s, 'depth_map'), side) };
    });
  }

  /** The regressor alone, on one normalised 1x3xSxS tensor (the tread crop). */
  inferTread(tensor: Float32Array): Promise<TreadOutput> {
    return this.enqueue(() => this.runTread(this.tensor(tensor)));
  }

  async analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome> {
    // One decode (shrink-on-load to at most 640 px), as the scan service does, feeds both looks.
    const frame = request.frame ?? (await decodeFrame(request.image, await uprightSize(request.image)));
    const spec = this.manifest.input;
    const cal = this.manifest.calibration;
    const input = await prepareFrameInput(frame, spec);
    const raw = await this.infer(input.tensor);
    // The second look: the regressor on the box around the tread the segmenter found, taken from
    // the frame at its own resolution (more pixels on the tread when it fills little of the photo).
    let cropMm: number | null = null;
    const box = cal.crop && acceptsTire(raw.tread, raw.maps, cal) ? treadBox(raw.maps, frame.width, frame.height, cal.crop) : null;
    if (box) cropMm = (await this.inferTread(normalise(cropPixels(frame, box, spec.size), spec))).depthMm;
    const { analysis } = combine(raw.tread, raw.maps, cal, cropMm);
    const outcome: AnalyzeOutcome = { analysis: { ...analysis, modelVersion: this.manifest.version } };
    if (request.verbose) outcome.verbose = await buildVerbose(raw.maps, input);
    return outcome;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await Promise.all([this.tread.release(), this.seg.release()]);
  }
}

export function createOnnxAnalyzer(options: OnnxAnalyzerOptions): Promise<Analyzer> {
  return OnnxAnalyzer.create(options);
}
