/**
 * Blocks this thread for `ms` milliseconds: start-up code only (opening the database, taking the
 * data-folder lock), where the next step must wait for another process. Atomics.wait where the
 * runtime allows it (Node); a main thread that refuses it (as browser-like ones may: the Electron
 * main process has not been tried here) gets a short spin instead of an exception.
 */
const cell = new Int32Array(new SharedArrayBuffer(4));

export function sleepSync(ms: number): void {
  try {
    Atomics.wait(cell, 0, 0, ms);
    return;
  } catch {
    // Atomics.wait is not allowed on this thread
  }
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin: at most the few milliseconds a caller asks for
  }
}
