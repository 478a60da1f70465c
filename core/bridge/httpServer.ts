/**
 * `salus serve --http`: the panel's web server. Static files of the renderer
 * build at `/`; `/api/jobs|memory|policy|cluster` (the CLI's JSON; cluster:
 * `{available, jobs}` or `{available: false, reason}`), `/metrics`
 * (Prometheus text) and the WebSocket `/api/events` (SalusApi calls and state
 * events, see core/protocol/bridge.ts) need the token, as a Bearer header or
 * `?token=`. Listens on 127.0.0.1 unless told otherwise.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import { runControl, type ControlTarget } from '../service/control.js';
import { createServiceMetrics } from './prometheus.js';
import { BRIDGE_METHODS, type BridgeCall, type BridgeMessage } from '../protocol/bridge.js';
import type { ServiceEvent } from '../protocol/api.js';

/** Where `npm run build:renderer` puts the panel (dist/renderer beside dist/core). */
export const RENDERER_DIR = fileURLToPath(new URL('../../renderer/', import.meta.url));

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
};
/** A WebSocket client this far behind (bytes unsent) misses events until it drains. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export interface HttpPanel {
  url: string;
  token: string;
  server: Server;
  close(): Promise<void>;
}

/** Parses `[HOST:]PORT`; the host defaults to loopback. */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:(.+):)?(\d+)$/.exec(text.trim());
  if (!match) throw new Error(`salus: --http expects [HOST:]PORT, got '${text}'`);
  const port = Number(match[2]);
  if (port > 65535) throw new Error(`salus: --http port ${port} is past 65535; pick a port from 1 to 65535 (0: any free one)`);
  return { host: match[1]?.replace(/^\[|\]$/g, '') || '127.0.0.1', port };
}

function tokenOf(request: IncomingMessage, url: URL): string | null {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice(7).trim();
  return url.searchParams.get('token');
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);
const isLoopback = (name: string) => LOOPBACK_NAMES.has(name) || name.startsWith('127.');

/** The host name of a `Host` header or an origin's authority, without port or IPv6 brackets. */
function hostName(authority: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(authority);
  return (bracketed ? bracketed[1] : authority.replace(/:\d*$/, '')).toLowerCase();
}

/**
 * Why an API or WebSocket request comes from somewhere it should not, or null.
 * On a loopback address the `Host` must name a loopback host, so a page whose
 * domain was rebound to 127.0.0.1 cannot reach the API (DNS rebinding); a
 * browser's `Origin`, when sent, must be the panel's own.
 */
function foreignRequest(request: IncomingMessage, listenHost: string): string | null {
  const authority = request.headers.host ?? '';
  if (isLoopback(listenHost) && !isLoopback(hostName(authority))) {
    return `requests must address the panel as ${listenHost} (got host '${authority}')`;
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${authority}` && origin !== `https://${authority}`) {
    return `cross-origin requests are refused (origin '${origin}')`;
  }
  return null;
}

function sameToken(given: string | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function serveStatic(response: ServerResponse, pathname: string): Promise<void> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('bad escape in the URL\n');
    return;
  }
  const relative = normalize(decoded).replace(/^([/\\])+/, '') || 'index.html';
  const file = join(RENDERER_DIR, relative);
  if (!file.startsWith(RENDERER_DIR.endsWith(sep) ? RENDERER_DIR : RENDERER_DIR + sep)) {
    response.writeHead(403).end();
    return;
  }
  try {
    const body = await readFile(file);
    response.writeHead(200, {
      'content-type': MIME[extname(file)] ?? 'application/octet-stream',
      'content-security-policy': "default-src 'self'; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
      'x-content-type-options': 'nosniff',
    });
    response.end(body);
  } catch {
    if (relative === 'index.html') {
      response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('The panel is not built. Run `npm run build` in the salus folder, then reload.\n');
    } else {
      response.writeHead(404).end();
    }
  }
}

/** Starts the web panel; resolves once it listens. */
export async function startHttp(target: ControlTarget, listen: string, token = process.env.SALUS_TOKEN || randomBytes(18).toString('hex')): Promise<HttpPanel> {
  const { host, port } = parseListen(listen);
  const { service } = target;
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 32 * 1024 * 1024 });
  const metrics = createServiceMetrics(service);

  const server = createServer((request, response) => {
    // Pages never leak the address (and its token) to another site.
    response.setHeader('referrer-policy', 'no-referrer');
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith('/api/') && url.pathname !== '/metrics') {
      void serveStatic(response, url.pathname);
      return;
    }
    const foreign = foreignRequest(request, host);
    if (foreign) {
      sendJson(response, 403, { error: foreign });
      return;
    }
    if (!sameToken(tokenOf(request, url), token)) {
      sendJson(response, 401, { error: 'missing or wrong token: use the panel URL that `salus serve --http` printed' });
      return;
    }
    if (url.pathname === '/metrics') {
      metrics.text().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (error: Error) => sendJson(response, 500, { error: `metrics failed: ${error.message}` }),
      );
      return;
    }
    const routes: Record<string, () => unknown> = {
      '/api/jobs': () => service.jobInfos(),
      '/api/memory': () => service.memoryMap(),
      '/api/policy': () => { const p = service.policyInfo(); return { name: p.name, params: p.params, knobs: p.knobs }; },
      '/api/snapshot': () => service.snapshot(),
      '/api/cluster': () => target.cluster.jobs(),
    };
    const route = routes[url.pathname];
    if (route && request.method === 'GET') {
      Promise.resolve().then(route).then(
        (body) => sendJson(response, 200, body),
        (error: Error) => sendJson(response, 500, { error: error.message }),
      );
    } else sendJson(response, 404, { error: `no route ${request.method} ${url.pathname}` });
  });

  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (foreignRequest(request, host)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\n\r\n');
      return;
    }
    if (url.pathname !== '/api/events' || !sameToken(tokenOf(request, url), token)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => bridge(ws, target));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (error.code === 'EADDRINUSE') reject(new Error(`salus: ${where} is already in use (another salus serve --http, or another program); pass --http with another port`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new Error(`salus: ${host} is not an address of this machine; pass --http with one that is (127.0.0.1 by default)`));
      else if (error.code === 'EACCES') reject(new Error(`salus: not allowed to listen at ${where} (ports below 1024 need privileges); pass --http with another port`));
      else reject(error);
    });
    server.listen(port, host, () => { server.removeAllListeners('error'); resolve(); });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${actualPort}/?token=${token}`,
    token,
    server,
    close: () => new Promise((resolve) => {
      metrics.dispose();
      for (const client of sockets.clients) client.terminate();
      server.close(() => resolve());
    }),
  };
}

/** One panel connection: calls in, answers and events out. */
function bridge(ws: WebSocket, target: ControlTarget): void {
  const { service } = target;
  const send = (message: BridgeMessage) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  const onEvent = (event: ServiceEvent) => {
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return;
    send({ event });
  };
  const stopListening = service.onDidPublish(onEvent);
  ws.on('close', stopListening);
  send({ event: { type: 'snapshot', snapshot: service.snapshot() } });
  ws.on('message', async (data) => {
    let call: BridgeCall;
    try {
      call = JSON.parse(String(data)) as BridgeCall;
      if (typeof call.id !== 'number' || !BRIDGE_METHODS.includes(call.method) || !Array.isArray(call.params)) throw new Error('not a call');
    } catch {
      send({ id: -1, error: { message: `not a bridge call; expected {id, method, params} with method one of ${BRIDGE_METHODS.join(', ')}` } });
      return;
    }
    try {
      const result = await runControl(target, call.method, call.params, 'web');
      send({ id: call.id, result: result ?? null });
    } catch (error) {
      send({ id: call.id, error: { message: (error as Error).message } });
    }
  });
}
