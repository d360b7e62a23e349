/**
 * Backpressure in front of the analyzer: `concurrency` analyses run, up to `limit`
 * wait, and anything beyond is refused at once with SERVER_BUSY so memory stays
 * bounded (each waiter holds an upload) and callers learn to retry.
 */
import { AppError } from '../errors.js';

export class AnalysisQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Smoothed duration of one analysis, for a Retry-After that means something. */
  private averageMs = 1000;

  constructor(
    private readonly concurrency: number,
    private readonly limit: number,
  ) {}

  get stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.limit) {
        const seconds = Math.max(1, Math.ceil(((this.waiting.length / this.concurrency + 1) * this.averageMs) / 1000));
        throw new AppError('SERVER_BUSY', 'The server is busy analysing other images; please retry shortly.', {
          headers: { 'Retry-After': String(seconds) },
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    const started = performance.now();
    try {
      return await task();
    } finally {
      this.averageMs = this.averageMs * 0.8 + (performance.now() - started) * 0.2;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `running` never drops and rises again.
      if (next) next();
      else this.running--;
    }
  }
}
