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

/** Listeners for the window's WebContents; index.ts attaches them, tests call them directly. */
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
    /** No second window ever: same-origin targets are refused, https goes to the browser. */
    windowOpen(details: { url: string }): { action: 'deny' } {
      if (decideNavigation(details.url, appOrigin) === 'open-external') openQuietly(details.url);
      return { action: 'deny' };
    },
    willAttachWebview(event: { preventDefault(): void }): void {
      event.preventDefault();
    },
  };
}
