// App-wide guards with fake web contents, app and session: navigation and new
// windows denied, webviews refused, permissions refused but clipboard writes.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { hardenWebContents, setupSecurity, type GuardedContents } from '../../../electron/security.js';

class FakeContents extends EventEmitter {
  openHandler: ((details: { url: string }) => { action: string }) | null = null;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }) { this.openHandler = handler; }
  /** Fires `name` as Chromium would and says whether the default was prevented. */
  attempt(name: string, url = ''): boolean {
    let prevented = false;
    this.emit(name, { preventDefault: () => { prevented = true; } }, url);
    return prevented;
  }
}

describe('hardenWebContents', () => {
  const contents = new FakeContents();
  const blocked: string[] = [];
  hardenWebContents(contents as GuardedContents, (message) => blocked.push(message));

  it.each(['https://example.com/', 'file:///etc/passwd', 'app://salus/index.html', 'javascript:alert(1)'])('blocks navigation to %s', (url) => {
    expect(contents.attempt('will-navigate', url)).toBe(true);
    expect(blocked.at(-1)).toContain(url.slice(0, 40));
  });

  it('blocks redirects and webviews', () => {
    expect(contents.attempt('will-redirect', 'https://example.com/')).toBe(true);
    expect(contents.attempt('will-attach-webview')).toBe(true);
  });

  it('denies every new window', () => {
    expect(contents.openHandler?.({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
    expect(contents.openHandler?.({ url: 'app://salus/index.html' })).toEqual({ action: 'deny' });
  });
});

describe('setupSecurity', () => {
  it('hardens every web contents the app creates and answers permissions', () => {
    const app = new EventEmitter();
    let request: ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | null = null;
    let check: ((contents: unknown, permission: string) => boolean) | null = null;
    setupSecurity({
      app: app as never,
      session: { setPermissionRequestHandler: (h) => { request = h; }, setPermissionCheckHandler: (h) => { check = h; } },
      log: () => {},
    });
    const contents = new FakeContents();
    app.emit('web-contents-created', {}, contents);
    expect(contents.attempt('will-navigate', 'https://example.com/')).toBe(true);
    expect(contents.openHandler?.({ url: 'https://example.com/' })).toEqual({ action: 'deny' });

    const answers: Record<string, boolean> = {};
    for (const permission of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read', 'clipboard-sanitized-write']) {
      request!(null, permission, (granted) => { answers[permission] = granted; });
      expect(check!(null, permission)).toBe(answers[permission]);
    }
    expect(answers).toEqual({
      media: false, geolocation: false, notifications: false, openExternal: false, 'clipboard-read': false, 'clipboard-sanitized-write': true,
    });
  });
});
