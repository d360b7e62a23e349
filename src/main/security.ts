/**
 * Session-wide rules for the app window: which permissions a page may get, and the CSP
 * the window enforces even if a response arrives without one.
 */
import { SECURITY_HEADERS } from '../core/http/security.js';
import { originOf } from './navigation.js';

/** The core's own policy: one definition, whether the core or this fallback sends it. */
export const APP_CSP = SECURITY_HEADERS['content-security-policy']!;

/**
 * The webcam (video only: a tread photo needs no microphone), and writing to the clipboard
 * so the owner can copy a new API key, which is shown only once. Everything else is refused.
 */
export function permissionGuards(appOrigin: string) {
  return {
    request(permission: string, details: { requestingUrl: string; mediaTypes?: string[] }): boolean {
      if (originOf(details.requestingUrl) !== appOrigin) return false;
      if (permission === 'media') return (details.mediaTypes ?? []).every((type) => type === 'video');
      return permission === 'clipboard-sanitized-write';
    },
    /** What the page may believe it has (permissions.query, device labels): the same rule as request. */
    check(permission: string, requestingOrigin: string, mediaType?: string): boolean {
      if (originOf(requestingOrigin) !== appOrigin) return false;
      if (permission === 'media') return mediaType === undefined || mediaType === 'video';
      return permission === 'clipboard-sanitized-write';
    },
  };
}

type Headers = Record<string, string[] | string>;

/** Adds APP_CSP to app-origin responses that lack a policy; returns undefined to leave them unchanged. */
export function withCspFallback(url: string, headers: Headers | undefined, appOrigin: string): Headers | undefined {
  if (originOf(url) !== appOrigin) return undefined;
  const has = Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'content-security-policy');
  return has ? undefined : { ...headers, 'Content-Security-Policy': [APP_CSP] };
}
