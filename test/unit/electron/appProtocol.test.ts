// app://salus over real files: the renderer build and nothing else, each
// response with the CSP.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APP_ENTRY_URL, CONTENT_SECURITY_POLICY, createAppRequestHandler, isAppUrl, registerAppScheme, setupAppProtocol,
} from '../../../electron/appProtocol.js';

let dir: string;
let root: string;
let serve: (request: Request) => Promise<Response>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'salus-protocol-'));
  root = join(dir, 'renderer');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Salus</title>');
  writeFileSync(join(root, 'assets', 'index-abc.js'), 'console.log(1)');
  writeFileSync(join(root, 'assets', 'index-abc.css'), 'body{}');
  writeFileSync(join(dir, 'secret.txt'), 'not for the page');
  serve = createAppRequestHandler(root);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const get = (url: string, method = 'GET') => serve(new Request(url, { method }));

describe('app:// protocol', () => {
  it('serves the entry page with a strict CSP', async () => {
    const response = await get(APP_ENTRY_URL);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<title>Salus</title>');
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toBe(CONTENT_SECURITY_POLICY);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves assets with their types, and / as index.html', async () => {
    expect((await get('app://salus/assets/index-abc.js')).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await get('app://salus/assets/index-abc.css')).headers.get('content-type')).toMatch(/^text\/css/);
    expect(await (await get('app://salus/')).text()).toContain('<title>Salus</title>');
    const head = await get(APP_ENTRY_URL, 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it.each([
    ['a file outside the build, by encoded ..', 'app://salus/..%2fsecret.txt', 404],
    ['a file outside the build, by encoded backslash ..', 'app://salus/..%5csecret.txt', 404],
    ['a folder', 'app://salus/assets', 404],
    ['a missing file', 'app://salus/nope.js', 404],
    ['another host', 'app://evil/index.html', 404],
    ['a NUL in the path', 'app://salus/index.html%00.js', 400],
    ['a broken escape', 'app://salus/%E0%A4%A', 400],
  ])('refuses %s', async (_what, url, status) => {
    const response = await get(url);
    expect(response.status).toBe(status);
    expect(await response.text()).not.toContain('not for the page');
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('answers only GET and HEAD', async () => {
    expect((await get(APP_ENTRY_URL, 'POST')).status).toBe(405);
  });

  it('tells app URLs from others', () => {
    expect(isAppUrl('app://salus/index.html')).toBe(true);
    expect(isAppUrl('app://salus/')).toBe(true);
    expect(isAppUrl('app://salus.evil/index.html')).toBe(false);
    expect(isAppUrl('https://salus/index.html')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });

  it('registers app: as a standard, secure scheme and serves it through protocol.handle', async () => {
    const registered: unknown[] = [];
    registerAppScheme({ registerSchemesAsPrivileged: (schemes) => registered.push(...schemes) });
    expect(registered).toEqual([{ scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) }]);
    // Neither bypassing CSP nor corsEnabled (which would let other origins read app:// responses).
    expect((registered[0] as { privileges: Record<string, boolean> }).privileges).not.toHaveProperty('bypassCSP');
    expect((registered[0] as { privileges: Record<string, boolean> }).privileges).not.toHaveProperty('corsEnabled');

    const handlers = new Map<string, (request: Request) => Promise<Response>>();
    setupAppProtocol({ protocol: { handle: (scheme, handler) => handlers.set(scheme, handler) }, rootDir: root });
    expect((await handlers.get('app')!(new Request(APP_ENTRY_URL))).status).toBe(200);
  });
});
