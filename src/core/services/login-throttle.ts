/**
 * Failed-login throttle: after MAX_FAILURES failures for one email from one IP within
 * WINDOW_MS, further attempts get TOO_MANY_ATTEMPTS until the oldest failure ages out.
 * Kept in memory: it resets on restart and is per instance (a hub behind a load
 * balancer throttles per instance), which is enough to stop online guessing.
 * Memory is bounded (SlidingWindow).
 */
import { AppError } from '../errors.js';
import { SlidingWindow } from './support/sliding-window.js';

export const MAX_FAILURES = 5;
export const WINDOW_MS = 15 * 60 * 1000;

export class LoginThrottle {
  private readonly failures = new SlidingWindow(WINDOW_MS, MAX_FAILURES);

  /** Throws TOO_MANY_ATTEMPTS with Retry-After when the key is locked out. */
  check(key: string, now: number): void {
    const retryAfter = this.failures.retryAfterS(key, now);
    if (retryAfter === null) return;
    throw new AppError('TOO_MANY_ATTEMPTS', `Too many failed sign-in attempts; try again in ${Math.ceil(retryAfter / 60)} minute(s).`, {
      headers: { 'Retry-After': String(retryAfter) },
    });
  }

  /**
   * check() and count the attempt as a failure at once, before the password hash is awaited: a
   * burst of guesses sent together is counted as it arrives, not after every one was checked
   * (succeed() clears the count when the password was right).
   */
  attempt(key: string, now: number): void {
    this.check(key, now);
    this.failures.add(key, now);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }

  prune(now: number): void {
    this.failures.prune(now);
  }
}
