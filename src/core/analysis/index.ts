export * from './analyzer.js';
export { DISCLAIMER } from './disclaimer.js';
export { loadManifest, type Manifest, type Calibration } from './manifest.js';
export { createOnnxAnalyzer, OnnxAnalyzer, type OnnxAnalyzerOptions } from './onnx-analyzer.js';
