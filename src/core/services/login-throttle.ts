/**
 * Failed-login throttle: after MAX_FAILURES failures for one email from one IP within
 * WINDOW_MS, further attempts get TOO_MANY_ATTEMPTS until the oldest failure ages out.
 * Kept in memory: it resets on restart and is per instance (a hub behind a load
 * balancer throttles per instance), which is enough to stop online guessing.
 * Memory is bounded: stale entries are pruned and the map is capped.
 */
import { AppError } from '../errors.js';

export const MAX_FAILURES = 5;
export const WINDOW_MS = 15 * 60 * 1000;
const MAX_TRACKED = 10_000;

export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
    if (times.length === 0) this.failures.delete(key);
    else this.failures.set(key, times);
    return times;
  }

  /** Throws TOO_MANY_ATTEMPTS with Retry-After when the key is locked out. */
  check(key: string, now: number): void {
    const times = this.recent(key, now);
    if (times.length < MAX_FAILURES) return;
    const retryAfter = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - now) / 1000));
    throw new AppError(
      'TOO_MANY_ATTEMPTS',
      `Too many failed sign-in attempts; try again in ${Math.ceil(retryAfter / 60)} minute(s).`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  }

  fail(key: string, now: number): void {
    const times = this.recent(key, now);
    times.push(now);
    this.failures.delete(key);
    this.failures.set(key, times.slice(-MAX_FAILURES));
    if (this.failures.size > MAX_TRACKED) this.prune(now);
    while (this.failures.size > MAX_TRACKED) this.failures.delete(this.failures.keys().next().value!);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }

  prune(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
  }
}
