import { describe, expect, it } from 'vitest';
import { APP_CSP, permissionGuards, withCspFallback } from '../../src/main/security.js';

const APP = 'http://127.0.0.1:8787';

describe('permissions', () => {
  const guards = permissionGuards(APP);

  it('grants the webcam to the app and to nobody else', () => {
    expect(guards.request('media', { requestingUrl: `${APP}/scan`, mediaTypes: ['video'] })).toBe(true);
    expect(guards.request('media', { requestingUrl: 'https://example.com/', mediaTypes: ['video'] })).toBe(false);
    expect(guards.check('media', APP)).toBe(true);
    expect(guards.check('media', 'http://127.0.0.1:9999')).toBe(false);
  });

  it('does not grant the microphone, nor say it is granted', () => {
    expect(guards.request('media', { requestingUrl: APP, mediaTypes: ['video', 'audio'] })).toBe(false);
    expect(guards.check('media', APP, 'audio')).toBe(false);
    expect(guards.check('media', APP, 'unknown')).toBe(false);
    expect(guards.check('media', APP, 'video')).toBe(true);
  });

  it('lets the app copy a new API key but refuses other permissions', () => {
    expect(guards.request('clipboard-sanitized-write', { requestingUrl: APP })).toBe(true);
    for (const permission of ['geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fileSystem', 'display-capture']) {
      expect(guards.request(permission, { requestingUrl: APP })).toBe(false);
      expect(guards.check(permission, APP)).toBe(false);
    }
  });
});

describe('CSP fallback', () => {
  it('adds the app policy to app responses that lack one', () => {
    const headers = withCspFallback(`${APP}/`, { 'content-type': ['text/html'] }, APP);
    expect(headers?.['Content-Security-Policy']).toEqual([APP_CSP]);
    expect(APP_CSP).toContain("default-src 'self'");
    expect(APP_CSP).toContain("object-src 'none'");
  });

  it("leaves the core's own policy and other origins alone", () => {
    expect(withCspFallback(`${APP}/`, { 'Content-Security-Policy': ["default-src 'self'"] }, APP)).toBeUndefined();
    expect(withCspFallback(`${APP}/`, { 'content-security-policy': ["default-src 'self'"] }, APP)).toBeUndefined();
    expect(withCspFallback('https://example.com/', {}, APP)).toBeUndefined();
  });
});
