/**
 * Photos the scan queue has still to send live only in this page's memory (a webcam shot nowhere
 * else). The desktop window reports how many to its main process, which asks before closing or
 * quitting throws them away (src/main/lifecycle.ts leaveGuard); a plain browser is asked through
 * beforeunload ("Leave site?").
 */
import { bridge } from './bridge';

/** The count last told; none yet (-1): a page's first count is always told (main may hold a crashed page's). */
let reported = -1;

function holdUnload(event: BeforeUnloadEvent): void {
  event.preventDefault();
  // deprecated, yet Chromium before 119 and Safari ask only when it is set: kept on purpose
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  event.returnValue = '';
}

/** Tells whoever can ask before the page goes how many photos wait; a repeat of the last count is not sent. */
export function reportPendingWork(waiting: number): void {
  if (waiting === reported) return;
  const desktop = bridge();
  if (desktop) {
    desktop.setPendingWork(waiting).catch(() => undefined); // an older desktop without the call: nothing asks
  } else if (waiting > 0) {
    window.addEventListener('beforeunload', holdUnload); // once: the same listener is added once
  } else {
    window.removeEventListener('beforeunload', holdUnload);
  }
  reported = waiting;
}
