/**
 * App-wide guards from Electron's security checklist, applied to every web
 * contents the app ever creates (not just the one window we know of): no
 * navigation away from the loaded page, no new windows, no webviews, and no
 * web permission but clipboard writes.
 * https://www.electronjs.org/docs/latest/tutorial/security
 */

/** The parts of a WebContents the guards hook. */
export interface GuardedContents {
  on(event: 'will-navigate' | 'will-redirect', listener: (event: { preventDefault(): void }, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: { preventDefault(): void }) => void): unknown;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
}

/** The only web permission the panel may have (its "copy" buttons). */
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write']);

/** Blocks navigation, redirects, new windows and webviews for `contents`. */
export function hardenWebContents(contents: GuardedContents, log: (message: string) => void = console.error): void {
  // The panel is one page; a link, a dropped file or a script must not replace it.
  contents.on('will-navigate', (event, url) => {
    event.preventDefault();
    log(`salus desktop: blocked navigation to ${url.slice(0, 200)}`);
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}

/** Whether the panel may have a web permission (asked or checked). */
export function isPermissionAllowed(permission: string): boolean {
  return ALLOWED_PERMISSIONS.has(permission);
}

export interface SecuritySetup {
  app: { on(event: 'web-contents-created', listener: (event: unknown, contents: GuardedContents) => void): unknown };
  session: {
    setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
    setPermissionCheckHandler(handler: (contents: unknown, permission: string) => boolean): void;
  };
  log?: (message: string) => void;
}

/** Hardens every web contents created from now on and answers permission requests. */
export function setupSecurity({ app, session, log }: SecuritySetup): void {
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, log));
  session.setPermissionRequestHandler((_contents, permission, callback) => callback(isPermissionAllowed(permission)));
  session.setPermissionCheckHandler((_contents, permission) => isPermissionAllowed(permission));
}
