/**
 * Work measured in this process (bench/calibration.ts, bench/shop-reader.ts): its wall time, the
 * resident memory before it (after a GC where `--expose-gc` allows) and at its peak (sampled every
 * 20 ms), and the event loop's delay meanwhile (how long a request arriving then would wait).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface Watched<T> {
  result: T;
  ms: number;
  rssBefore: number;
  rssPeak: number;
  /** The event loop's delay, ns (each sample includes the sampling interval). */
  loop: IntervalHistogram;
}

export async function watched<T>(work: () => Promise<T>, loopResolutionMs: number): Promise<Watched<T>> {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
  const loop = monitorEventLoopDelay({ resolution: loopResolutionMs });
  loop.enable();
  const started = performance.now();
  try {
    const result = await work();
    return { result, ms: performance.now() - started, rssBefore, rssPeak, loop };
  } finally {
    loop.disable();
    clearInterval(sampler);
  }
}
