/**
 * Registration throttle: at most `perHour` sign-ups per client address in any hour; more get
 * TOO_MANY_ATTEMPTS (429, Retry-After) like the login throttle, so a hostile client cannot
 * create accounts (or probe which emails exist, or burn scrypt time) without end. An attempt
 * counts whether or not the email was free. The address is the metering one (an IPv6 caller
 * by its /64), from the client IP the app computes (X-Forwarded-For only with TRUST_PROXY).
 * In memory and per instance, like the login throttle.
 */
import { DEFAULT_REGISTRATIONS_PER_HOUR } from '../config/schema.js';
import { AppError } from '../errors.js';
import { meteringAddress } from './support/client-ip.js';
import { SlidingWindow } from './support/sliding-window.js';

export const REGISTRATION_WINDOW_MS = 60 * 60 * 1000;

export class RegistrationThrottle {
  private readonly attempts: SlidingWindow;

  constructor(readonly perHour = DEFAULT_REGISTRATIONS_PER_HOUR) {
    this.attempts = new SlidingWindow(REGISTRATION_WINDOW_MS, perHour);
  }

  /**
   * Counts one registration from `ip`, or throws TOO_MANY_ATTEMPTS with Retry-After when its
   * hour is used up. Check and count are one synchronous step, so concurrent requests cannot
   * slip past the limit together.
   */
  take(ip: string, now: number): void {
    const key = meteringAddress(ip);
    const retryAfter = this.attempts.retryAfterS(key, now);
    if (retryAfter !== null) {
      throw new AppError('TOO_MANY_ATTEMPTS', `Too many accounts created from this address; try again in ${Math.ceil(retryAfter / 60)} minute(s).`, {
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    this.attempts.add(key, now);
  }

  prune(now: number): void {
    this.attempts.prune(now);
  }
}
