/**
 * The Electron preload bridge (declared in src/preload/index.d.ts) when the page runs in
 * the desktop window; absent in a plain browser, so every use has a browser fallback.
 * Its calls reject with a BridgeError carrying the failure's `code` (see clientBridge).
 */
import { clientBridge } from '../../../preload/bridge-outcome';

export { BridgeError } from '../../../preload/bridge-outcome';

export function bridge(): TireWear.Bridge | null {
  return window.tirewear ? clientBridge(window.tirewear) : null;
}
