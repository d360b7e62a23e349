/** When the pusher runs: the idle poll, the hourly probe, the back-off after a failed pass, and the timers behind them. */

export const BACKOFF_BASE_MS = 2_000;
export const BACKOFF_CAP_MS = 5 * 60_000;
/** How often an idle pusher looks for new changes. */
export const IDLE_POLL_MS = 10_000;
/** How often an idle desk checks that its hub still has what it acknowledged (desk-marks.ts). */
export const PROBE_INTERVAL_MS = 60 * 60_000;

/** Delay before retry number `failures` (1, 2, ...): doubling from the base, capped, with full jitter on half of it. */
export function backoffDelay(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export interface Timers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (run, ms) => {
    const handle = setTimeout(run, ms);
    handle.unref();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
