/**
 * The panel's origin, `app://salus`: a privileged custom scheme serving the
 * renderer build (dist/renderer) and nothing else, every response with a strict
 * Content-Security-Policy. Loading from a custom protocol rather than file://
 * gives the page a real origin for the IPC sender check and no file access
 * (https://www.electronjs.org/docs/latest/tutorial/security#18-avoid-usage-of-the-file-protocol-and-prefer-usage-of-custom-protocols).
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';

export const APP_SCHEME = 'app';
export const APP_HOST = 'salus';
/** The panel's entry page. */
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * Scripts, styles, fonts and fetches from the app's own origin only; images
 * also from data: and blob: URLs (canvas exports); no plugins, frames, forms
 * or base rewriting. The renderer build needs no inline script or eval.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/** Whether `url` is a page of the panel's origin. */
export function isAppUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST;
  } catch {
    return false;
  }
}

/** Registers the scheme as standard and secure; must run before the app is ready. */
export function registerAppScheme(protocol: { registerSchemesAsPrivileged(schemes: { scheme: string; privileges: Record<string, boolean> }[]): void }): void {
  protocol.registerSchemesAsPrivileged([{
    scheme: APP_SCHEME,
    privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true },
  }]);
}

/** Serves `rootDir` at `app://salus/` (call once the app is ready). */
export function setupAppProtocol({ protocol, rootDir }: {
  protocol: { handle(scheme: string, handler: (request: Request) => Promise<Response>): void };
  rootDir: string;
}): void {
  protocol.handle(APP_SCHEME, createAppRequestHandler(rootDir));
}

/**
 * Answers a request with the file under `rootDir` its path names (`/` is
 * index.html): 404 for another host, a path outside `rootDir` or a missing
 * file, 405 for anything but GET and HEAD.
 */
export function createAppRequestHandler(rootDir: string): (request: Request) => Promise<Response> {
  const root = resolve(rootDir);
  return async (request) => {
    const url = new URL(request.url);
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(405, 'method not allowed');
    if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return plain(404, 'not found');
    let pathname: string;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return plain(400, 'bad path');
    }
    if (pathname.includes('\0')) return plain(400, 'bad path');
    const file = resolve(root, `.${pathname === '/' ? '/index.html' : pathname}`);
    const inside = relative(root, file);
    if (!inside || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return plain(404, 'not found');
    try {
      if (!(await stat(file)).isFile()) return plain(404, 'not found');
      const body = request.method === 'HEAD' ? null : await readFile(file);
      return new Response(body, { status: 200, headers: headers(CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream') });
    } catch {
      return plain(404, 'not found');
    }
  };
}

function headers(contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  };
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: headers('text/plain; charset=utf-8') });
}
