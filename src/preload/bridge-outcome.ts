/**
 * Both halves of the bridge's error contract, kept together (see index.d.ts for why it exists):
 * the preload reads main's answers with readOutcome/invokeFailure, the page (renderer's
 * lib/bridge.ts) unwraps them with clientBridge. No imports: it runs in the sandboxed
 * preload and in the page.
 */

const ELECTRON_INVOKE_PREFIX = /^Error invoking remote method '[^']*': /;
const ERROR_NAME_PREFIX = /^[A-Za-z]*Error: /;

/** An answer from main as the preload received it, checked: anything malformed is a failure. */
export function readOutcome<T>(raw: unknown): TireWear.Outcome<T> {
  if (typeof raw === 'object' && raw !== null) {
    const answer = raw as Record<string, unknown>;
    if (answer.ok === true) return { ok: true, value: answer.value as T };
    if (answer.ok === false && typeof answer.code === 'string' && typeof answer.message === 'string') {
      return { ok: false, code: answer.code, message: answer.message };
    }
  }
  return { ok: false, code: 'INTERNAL_ERROR', message: 'TireWear gave an unexpected answer. Restart TireWear and try again.' };
}

/**
 * A call that rejected instead of answering (main refused the caller, or no handler): Electron
 * delivers only "Error invoking remote method '<channel>': <Name>: <message>", so the code is gone.
 */
export function invokeFailure(error: unknown): TireWear.BridgeFailure {
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw.replace(ELECTRON_INVOKE_PREFIX, '').replace(ERROR_NAME_PREFIX, '').trim();
  return { ok: false, code: 'INTERNAL_ERROR', message: message || 'The TireWear window could not reach the app.' };
}

/** A failed desktop call, as the page sees it: the message main wrote, and its code. */
export class BridgeError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
  }
}

async function settle<T>(call: () => Promise<TireWear.Outcome<T>>): Promise<T> {
  let outcome: TireWear.Outcome<T>;
  try {
    outcome = readOutcome<T>(await call());
  } catch (error) {
    outcome = invokeFailure(error);
  }
  if (outcome.ok) return outcome.value;
  throw new BridgeError(outcome.code, outcome.message);
}

/** window.tirewear for the page's code: each failure Outcome becomes a thrown BridgeError. */
export function clientBridge(exposed: TireWear.ExposedBridge): TireWear.Bridge {
  return {
    appVersion: exposed.appVersion,
    openDataFolder: () => settle(() => exposed.openDataFolder()),
    printToPDF: (request) => settle(() => exposed.printToPDF(request)),
    openExternal: (url) => settle(() => exposed.openExternal(url)),
    setPendingWork: (count) => settle(() => exposed.setPendingWork(count)),
  };
}
