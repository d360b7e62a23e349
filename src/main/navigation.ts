/**
 * The window only ever shows the app's own origin. Anything else is refused, except https
 * links, which go to the user's browser where they belong.
 */
export type NavigationDecision = 'allow' | 'open-external' | 'deny';

export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** https only, no embedded credentials, bounded length: what a help or vendor link looks like. */
export function isSafeExternalUrl(url: unknown): url is string {
  if (typeof url !== 'string' || url.length > 2048) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

export function decideNavigation(url: string, appOrigin: string): NavigationDecision {
  if (originOf(url) === appOrigin) return 'allow';
  return isSafeExternalUrl(url) ? 'open-external' : 'deny';
}

interface PreventableEvent {
  url: string;
  preventDefault(): void;
}

/** The app's own documents that a link opens in the user's browser (the API description, for a POS integrator). */
const BROWSER_DOCUMENTS = new Set(['/api/v1/openapi.json']);

function isBrowserDocument(url: string, appOrigin: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.origin === appOrigin && BROWSER_DOCUMENTS.has(parsed.pathname);
  } catch {
    return false;
  }
}

/**
 * Listeners for the window's WebContents; index.ts attaches them, tests call them directly.
 * `openExternal` is the OS's own opener: these guards decide what reaches it (https links, and
 * the app's own BROWSER_DOCUMENTS).
 */
export function navigationGuards(appOrigin: string, openExternal: (url: string) => Promise<void>) {
  const openQuietly = (url: string): void => void openExternal(url).catch(() => undefined);
  return {
    willNavigate(event: PreventableEvent): void {
      const decision = decideNavigation(event.url, appOrigin);
      if (decision === 'allow') return;
      event.preventDefault();
      if (decision === 'open-external') openQuietly(event.url);
    },
    /** A redirect is the server's doing, not a click: it never leaves the app. */
    willRedirect(event: PreventableEvent): void {
      if (originOf(event.url) !== appOrigin) event.preventDefault();
    },
    /**
     * No second window ever: https and the app's own API description go to the browser, other
     * same-origin targets are refused.
     */
    windowOpen(details: { url: string }): { action: 'deny' } {
      if (decideNavigation(details.url, appOrigin) === 'open-external' || isBrowserDocument(details.url, appOrigin)) {
        openQuietly(details.url);
      }
      return { action: 'deny' };
    },
    willAttachWebview(event: { preventDefault(): void }): void {
      event.preventDefault();
    },
  };
}
