/**
 * The desktop window's session and web contents, locked down: permissions only for the app's own
 * origin (the webcam), a CSP on every response that lacks one, navigation and new windows kept to
 * the app (security.ts and navigation.ts hold the rules; this file wires them into Electron).
 */
import { BrowserWindow, Menu, session, shell, type App } from 'electron';
import { navigationGuards } from './navigation.js';
import { permissionGuards, withCspFallback } from './security.js';
import { contextMenuTemplate } from './window-options.js';

export function secureSession(appOrigin: string, serverOrigin: string): void {
  const permissions = permissionGuards(appOrigin);
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_contents, permission, callback, details) => {
    const mediaTypes = 'mediaTypes' in details ? details.mediaTypes : undefined;
    callback(permissions.request(permission, { requestingUrl: details.requestingUrl, mediaTypes }));
  });
  ses.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) =>
    permissions.check(permission, requestingOrigin, 'mediaType' in details ? details.mediaType : undefined),
  );
  ses.webRequest.onHeadersReceived((details, callback) => {
    const responseHeaders = withCspFallback(details.url, details.responseHeaders, serverOrigin);
    callback(responseHeaders ? { responseHeaders } : {});
  });
}

/** Every window and frame: navigation kept on the app's origin, links out to the browser, the text context menu. */
export function guardEveryWebContents(electronApp: App, appOrigin: string): void {
  const guards = navigationGuards(appOrigin, (url) => shell.openExternal(url));
  electronApp.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', guards.willNavigate);
    contents.on('will-redirect', guards.willRedirect);
    contents.on('will-attach-webview', guards.willAttachWebview);
    contents.setWindowOpenHandler(guards.windowOpen);
    contents.on('context-menu', (_menuEvent, params) => {
      const items = contextMenuTemplate(params);
      if (items.length > 0) Menu.buildFromTemplate(items).popup({ window: BrowserWindow.fromWebContents(contents) ?? undefined });
    });
  });
}
