/**
 * A per-caller limit on free work that costs processor time (the live capture check, a stored
 * scan's overlays made again): at most `perMinute` requests in any minute (a sliding window) per
 * account, whatever key or session it uses, else per client address as metering groups it. Beyond,
 * TOO_MANY_ATTEMPTS (429) with Retry-After. Each limit made here keeps its own count.
 */
import { AppError } from '../../errors.js';
import type { Caller } from '../../types.js';
import { meteringAddress } from './client-ip.js';
import { SlidingWindow } from './sliding-window.js';

/** Who is limited: an account (whatever key or session), else the client address as metering groups it. */
export function limitSubject(caller: Caller): string {
  return caller.kind === 'account' ? `acct:${caller.account.id}` : `ip:${meteringAddress(caller.ip)}`;
}

/**
 * `admit(caller, nowMs)` throws TOO_MANY_ATTEMPTS once the caller was admitted `perMinute` times in
 * the last minute, and otherwise counts this request. `what` names the requests in the message
 * ("capture checks"): "Too many capture checks: at most 120 a minute. Try again in 3 s."
 */
export function perMinuteLimit(perMinute: number, what: string): (caller: Caller, nowMs: number) => void {
  const window = new SlidingWindow(60_000, perMinute);
  return (caller, nowMs) => {
    const key = limitSubject(caller);
    const wait = window.retryAfterS(key, nowMs);
    if (wait !== null) {
      throw new AppError('TOO_MANY_ATTEMPTS', `Too many ${what}: at most ${perMinute} a minute. Try again in ${wait} s.`, {
        headers: { 'Retry-After': String(wait) },
      });
    }
    window.add(key, nowMs);
  };
}
