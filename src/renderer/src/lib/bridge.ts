/**
 * The Electron preload bridge (declared in src/preload/index.d.ts) when the page runs in
 * the desktop window; absent in a plain browser, so every use has a browser fallback.
 */
export function bridge(): TireWear.Bridge | null {
  return window.tirewear ?? null;
}
