/**
 * Backpressure in front of the analyzer: `concurrency` analyses run, up to `limit`
 * wait, and anything beyond is refused at once with SERVER_BUSY so memory stays
 * bounded (each waiter holds an upload) and callers learn to retry.
 *
 * Background work (the shop calibration's re-reading of stored photos) takes the same slots
 * through `runBackground`: it is never refused, and a freed slot goes to it only when no
 * request is waiting, so a scan at the counter never queues behind it.
 */
import { AppError } from '../../errors.js';

export class AnalysisQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly background: Array<() => void> = [];
  /** Smoothed duration of one analysis, for a Retry-After that means something. */
  private averageMs = 1000;

  constructor(
    private readonly concurrency: number,
    private readonly limit: number,
  ) {}

  get stats(): { running: number; waiting: number; background: number } {
    return { running: this.running, waiting: this.waiting.length, background: this.background.length };
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
    return this.hold(task);
  }

  /** Waits for a slot however long the queue is, behind every request waiting now or later. */
  async runBackground<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.background.push(resolve));
    else this.running++;
    return this.hold(task);
  }

  private async hold<T>(task: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await task();
    } finally {
      this.averageMs = this.averageMs * 0.8 + (performance.now() - started) * 0.2;
      const next = this.waiting.shift() ?? this.background.shift();
      // The slot passes straight to the next waiter, so `running` never drops and rises again.
      if (next) next();
      else this.running--;
    }
  }
}
