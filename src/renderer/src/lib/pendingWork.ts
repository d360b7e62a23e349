/**
 * Photos the scan queue has still to send live only in this page's memory (a webcam shot nowhere
 * else). The desktop window reports how many to its main process, which asks before closing or
 * quitting throws them away (src/main/lifecycle.ts leaveGuard); a plain browser is asked through
 * beforeunload ("Leave site?").
 */
import { bridge } from './bridge';

let reported = 0;

function holdUnload(event: BeforeUnloadEvent): void {
  event.preventDefault();
  event.returnValue = ''; // older Chromium needs it set to ask
}

/** Tells whoever can ask before the page goes how many photos wait; a repeat of the last count is not sent. */
export function reportPendingWork(waiting: number): void {
  if (waiting === reported) return;
  const desktop = bridge();
  if (desktop) {
    desktop.setPendingWork(waiting).catch(() => undefined); // an older desktop without the call: nothing asks
  } else if (waiting > 0 && reported === 0) {
    window.addEventListener('beforeunload', holdUnload);
  } else if (waiting === 0) {
    window.removeEventListener('beforeunload', holdUnload);
  }
  reported = waiting;
}
