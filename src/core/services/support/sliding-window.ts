/**
 * The bookkeeping the throttles share: recent event times per key within a sliding window.
 * Memory is bounded: a key keeps at most `keep` times, stale keys are pruned and the map is
 * capped (the oldest keys go first), so a flood of addresses cannot grow it without end.
 */
const MAX_TRACKED = 10_000;

export class SlidingWindow {
  private readonly events = new Map<string, number[]>();

  constructor(
    readonly windowMs: number,
    private readonly keep: number,
  ) {}

  /** Times of `key` still inside the window, oldest first. */
  private recent(key: string, now: number): number[] {
    const times = (this.events.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (times.length === 0) this.events.delete(key);
    else this.events.set(key, times);
    return times;
  }

  /**
   * null while `key` has fewer than `keep` events in the window; once it is full, whole
   * seconds (at least 1) until its oldest event leaves the window.
   */
  retryAfterS(key: string, now: number): number | null {
    const times = this.recent(key, now);
    if (times.length < this.keep) return null;
    return Math.max(1, Math.ceil((times[0]! + this.windowMs - now) / 1000));
  }

  add(key: string, now: number): void {
    const times = this.recent(key, now);
    times.push(now);
    // Re-inserted, so the map's order is least recently active first for the cap below.
    this.events.delete(key);
    this.events.set(key, times.slice(-this.keep));
    if (this.events.size > MAX_TRACKED) this.prune(now);
    while (this.events.size > MAX_TRACKED) this.events.delete(this.events.keys().next().value!);
  }

  delete(key: string): void {
    this.events.delete(key);
  }

  prune(now: number): void {
    for (const key of [...this.events.keys()]) this.recent(key, now);
  }
}
