/**
 * Which analyzer the bench measures. `onnx`: the shipped models (what `npm run serve`
 * loads); `decode-only`: the real decode without inference; `auto`: onnx when models/
 * loads, else decode-only with the reason, so the bench runs before the models land.
 */
import type { Analyzer } from '../src/core/analysis/analyzer.js';
import { DecodeOnlyAnalyzer } from './stand-in-analyzer.js';

export type AnalyzerMode = 'auto' | 'onnx' | 'decode-only';

export interface BenchAnalyzer {
  mode: Exclude<AnalyzerMode, 'auto'>;
  analyzer: Analyzer;
  /** Why `auto` fell back to decode-only. */
  fallbackReason?: string;
}

export async function loadBenchAnalyzer(mode: AnalyzerMode, modelsDir: string): Promise<BenchAnalyzer> {
  if (mode === 'decode-only') return { mode, analyzer: new DecodeOnlyAnalyzer() };
  try {
    const { createOnnxAnalyzer } = await import('../src/core/analysis/index.js');
    return { mode: 'onnx', analyzer: await createOnnxAnalyzer({ modelsDir }) };
  } catch (error) {
    if (mode === 'onnx') throw error;
    return { mode: 'decode-only', analyzer: new DecodeOnlyAnalyzer(), fallbackReason: (error as Error).message };
  }
}
