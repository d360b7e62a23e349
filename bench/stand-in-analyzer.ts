/**
 * An analyzer that does the real decode (the engine's analysisInput: the scan service's frame, or
 * one shrink-on-load decode to it, then the model's input) and no inference. The bench uses it when models/ holds no loadable
 * models yet (`--analyzer auto`), or on request (`--analyzer decode-only`) to show what the
 * service costs around the networks: HTTP, validation, thumbnail, storage, decode.
 */
import type { AnalyzeOutcome, AnalyzeRequest, Analyzer } from '../src/core/analysis/analyzer.js';
import { MM_PER_32ND, treadHealthIndex, wearForDepth } from '../src/core/analysis/analyzer.js';
import { analysisInput } from '../src/core/analysis/preprocess.js';

/** The input the shipped models expect (models/training/preprocess.py INPUT, mean and std 0.5). */
const INPUT = { size: 160, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };

export class DecodeOnlyAnalyzer implements Analyzer {
  readonly modelVersion = 'decode-only';

  async analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome> {
    const { input } = await analysisInput(request, INPUT);
    let sum = 0;
    for (let i = 0; i < input.tensor.length; i += 97) sum += input.tensor[i]!;
    const depth = Math.round(Math.min(9, Math.max(0.5, 5 + sum / 1000)) * 10) / 10;
    return {
      analysis: {
        wear: wearForDepth(depth),
        confidence: 0.5,
        estimatedDepthMm: depth,
        depthRangeMm: { min: Math.max(0, depth - 1), max: depth + 1 },
        treadHealthIndex: treadHealthIndex(depth),
        isPreliminary: true,
        modelAlignment: 0,
        twiConsensusCount: 0,
        modelVersion: this.modelVersion,
        depth32nds: Math.round(depth / MM_PER_32ND),
      },
    };
  }

  async close(): Promise<void> {}
}
