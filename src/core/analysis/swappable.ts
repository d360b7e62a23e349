/**
 * The analyzer the running core serves with, replaceable while it runs: a shop calibration made
 * from the Settings screen (services/calibration.ts) takes effect without a restart. Analyses
 * already running finish on the models they started with; the old analyzer is closed when the
 * last of them is done, never under one.
 */
import type { AnalyzeOutcome, AnalyzeRequest, Analyzer, SceneReading } from './analyzer.js';

export class SwappableAnalyzer implements Analyzer {
  #current: Analyzer;
  readonly #running = new Map<Analyzer, number>();
  readonly #retired = new Set<Analyzer>();
  readonly #closing: Array<Promise<void>> = [];
  #closed = false;

  constructor(initial: Analyzer) {
    this.#current = initial;
  }

  get modelVersion(): string {
    return this.#current.modelVersion;
  }

  /** The analyzer new analyses go to (for tests). */
  get current(): Analyzer {
    return this.#current;
  }

  async analyze(request: AnalyzeRequest): Promise<AnalyzeOutcome> {
    return this.#use(this.#current, (analyzer) => analyzer.analyze(request));
  }

  /**
   * The current models' scene reader (the live capture check, issue 42), or undefined when they
   * have none; held like an analysis, so a swap never closes the models under it.
   */
  get scene(): ((request: AnalyzeRequest) => Promise<SceneReading>) | undefined {
    const analyzer = this.#current;
    if (!analyzer.scene) return undefined;
    return (request) => this.#use(analyzer, (a) => a.scene!(request));
  }

  async #use<T>(analyzer: Analyzer, work: (analyzer: Analyzer) => Promise<T>): Promise<T> {
    this.#running.set(analyzer, (this.#running.get(analyzer) ?? 0) + 1);
    try {
      return await work(analyzer);
    } finally {
      const left = (this.#running.get(analyzer) ?? 1) - 1;
      if (left > 0) this.#running.set(analyzer, left);
      else {
        this.#running.delete(analyzer);
        if (this.#retired.delete(analyzer)) this.#close(analyzer);
      }
    }
  }

  /** New analyses go to `next` from now on; the previous analyzer closes once idle. After close(), `next` is closed at once. */
  swap(next: Analyzer): void {
    const previous = this.#current;
    if (previous === next) return;
    if (this.#closed) {
      this.#close(next);
      return;
    }
    this.#current = next;
    // back to one whose last analyses are still running: it serves again, it must not close when they end
    this.#retired.delete(next);
    if (this.#running.has(previous)) this.#retired.add(previous);
    else this.#close(previous);
  }

  #close(analyzer: Analyzer): void {
    // a failing close is the old models' problem, not the caller's: it must not fail an analysis
    this.#closing.push(analyzer.close().catch(() => undefined));
  }

  /** Closes the current analyzer and any retired one (in-flight analyses are the caller's to drain). */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [this.#current, ...this.#retired];
    this.#retired.clear();
    await Promise.all([...this.#closing, ...all.map((a) => a.close())]);
  }
}
