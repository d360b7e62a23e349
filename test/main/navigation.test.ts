import { describe, expect, it, vi } from 'vitest';
import { decideNavigation, isSafeExternalUrl, navigationGuards } from '../../src/main/navigation.js';

const APP = 'http://127.0.0.1:8787';

function event(url: string) {
  return { url, preventDefault: vi.fn() };
}

describe('navigation rules', () => {
  it('stays on the app origin and sends https elsewhere to the browser', () => {
    expect(decideNavigation(`${APP}/history?wear=worn`, APP)).toBe('allow');
    expect(decideNavigation('https://example.com/help', APP)).toBe('open-external');
    expect(decideNavigation('http://127.0.0.1:9999/', APP)).toBe('deny');
    expect(decideNavigation('http://localhost:8787/', APP)).toBe('deny');
    expect(decideNavigation('http://example.com/', APP)).toBe('deny');
    expect(decideNavigation('file:///etc/passwd', APP)).toBe('deny');
    expect(decideNavigation('javascript:alert(1)', APP)).toBe('deny');
    expect(decideNavigation('not a url', APP)).toBe('deny');
  });

  it('opens only plain https links externally', () => {
    expect(isSafeExternalUrl('https://tirewear.example/manual')).toBe(true);
    expect(isSafeExternalUrl('https://user:pw@example.com/')).toBe(false);
    expect(isSafeExternalUrl('smb://server/share')).toBe(false);
    expect(isSafeExternalUrl(`https://example.com/${'a'.repeat(3000)}`)).toBe(false);
    expect(isSafeExternalUrl(42)).toBe(false);
  });
});

describe('navigation guards', () => {
  it('lets in-app navigation through untouched', () => {
    const openExternal = vi.fn(async () => {});
    const guards = navigationGuards(APP, openExternal);
    const e = event(`${APP}/scans/abc`);
    guards.willNavigate(e);
    expect(e.preventDefault).not.toHaveBeenCalled();
    expect(openExternal).not.toHaveBeenCalled();
  });

  it('blocks a link leaving the app and hands https to the browser', () => {
    const openExternal = vi.fn(async () => {});
    const guards = navigationGuards(APP, openExternal);
    const https = event('https://example.com/');
    const http = event('http://evil.example/');
    guards.willNavigate(https);
    guards.willNavigate(http);
    expect(https.preventDefault).toHaveBeenCalled();
    expect(http.preventDefault).toHaveBeenCalled();
    expect(openExternal.mock.calls).toEqual([['https://example.com/']]);
  });

  it('never opens a second window', () => {
    const openExternal = vi.fn(async () => {});
    const guards = navigationGuards(APP, openExternal);
    expect(guards.windowOpen({ url: `${APP}/report` })).toEqual({ action: 'deny' });
    expect(guards.windowOpen({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
    expect(guards.windowOpen({ url: 'file:///C:/Windows' })).toEqual({ action: 'deny' });
    expect(openExternal.mock.calls).toEqual([['https://example.com/']]);
  });

  it('opens the API description (the keys page link for a POS integrator) in the browser, and nothing else of the app', () => {
    const openExternal = vi.fn(async () => {});
    const guards = navigationGuards(APP, openExternal);
    expect(guards.windowOpen({ url: `${APP}/api/v1/openapi.json` })).toEqual({ action: 'deny' });
    guards.windowOpen({ url: `${APP}/api/v1/account` });
    guards.windowOpen({ url: `${APP}/api/v1/openapi.json/../account` });
    guards.windowOpen({ url: 'http://evil.example/api/v1/openapi.json' });
    const away = event(`${APP}/api/v1/openapi.json`);
    guards.willNavigate(away); // in the window itself it stays an app page
    expect(away.preventDefault).not.toHaveBeenCalled();
    expect(openExternal.mock.calls).toEqual([[`${APP}/api/v1/openapi.json`]]);
  });

  it('refuses redirects off the app origin and any webview', () => {
    const guards = navigationGuards(
      APP,
      vi.fn(async () => {}),
    );
    const away = event('https://example.com/');
    const home = event(`${APP}/`);
    const webview = { preventDefault: vi.fn() };
    guards.willRedirect(away);
    guards.willRedirect(home);
    guards.willAttachWebview(webview);
    expect(away.preventDefault).toHaveBeenCalled();
    expect(home.preventDefault).not.toHaveBeenCalled();
    expect(webview.preventDefault).toHaveBeenCalled();
  });

  it('swallows a failing browser launch instead of crashing main', async () => {
    const guards = navigationGuards(APP, async () => {
      throw new Error('no browser');
    });
    expect(() => guards.willNavigate(event('https://example.com/'))).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
  });
});
