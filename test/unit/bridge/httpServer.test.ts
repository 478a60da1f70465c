/**
 * The web panel's server (core/bridge/httpServer.ts) on a real loopback HTTP
 * port, in front of a real SalusService in-process (test/unit/service/harness.ts:
 * SwiftShader, jobs over the in-memory transport): the token and where a request
 * comes from are checked before any API route, the routes answer the CLI's JSON,
 * static files stay inside the panel's folder, and the WebSocket bridge opens
 * with a snapshot and answers the panel's calls, and only those.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { parseListen, startHttp, type HttpPanel } from '../../../core/bridge/httpServer.js';
import type { BridgeMessage } from '../../../core/protocol/bridge.js';
import type { JobInfo } from '../../../core/protocol/state.js';
import { useService } from '../service/harness.js';

const harness = useService();
const TOKEN = 'test-token-0123456789';
let panel: HttpPanel | null = null;

afterEach(async () => {
  await panel?.close();
  panel = null;
});

/** A panel on a free loopback port, over a fresh service. */
async function startPanel(): Promise<{ port: number }> {
  harness.start();
  panel = await startHttp(harness.target, '127.0.0.1:0', TOKEN);
  return { port: Number(new URL(panel.url).port) };
}

/** One HTTP request with exactly these headers; resolves with status, headers and body. */
function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('parseListen', () => {
  it('reads [HOST:]PORT, loopback by default, IPv6 without brackets', () => {
    expect(parseListen('8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseListen(' 0.0.0.0:9400 ')).toEqual({ host: '0.0.0.0', port: 9400 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
  });

  it('says what it expects, and which port is past the range', () => {
    expect(() => parseListen('localhost')).toThrow("salus: --http expects [HOST:]PORT, got 'localhost'");
    expect(() => parseListen('70000')).toThrow(/port 70000 is past 65535/);
  });
});

describe('the HTTP API', () => {
  it('answers 401 without the right token, and the CLI\'s JSON with it (header or query)', async () => {
    const { port } = await startPanel();
    const { peer } = await harness.job({ hints: { priority: 3 } });
    await peer.requestDevice();
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${TOKEN}x` }]) {
      const refused = await get(port, '/api/jobs', headers);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body).error).toMatch(/^missing or wrong token/);
    }
    const jobs = await get(port, '/api/jobs', bearer);
    expect(jobs.status).toBe(200);
    expect(jobs.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(jobs.body) as JobInfo[]).toMatchObject([{ id: 'job-1', state: 'running', priority: 3 }]);
    expect(JSON.parse((await get(port, `/api/memory?token=${TOKEN}`)).body)).toMatchObject({ capacityBytes: harness.service.memoryMap().capacityBytes, lanes: [{ jobs: ['job-1'] }] });
    expect(Object.keys(JSON.parse((await get(port, '/api/policy', bearer)).body)).sort()).toEqual(['knobs', 'name', 'params']);
    expect(JSON.parse((await get(port, '/api/cluster', bearer)).body)).toEqual({ available: false, reason: 'no Slurm in this test' });
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin, even with the token', async () => {
    const { port } = await startPanel();
    const rebound = await get(port, '/api/jobs', { ...bearer, host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error).toBe(`requests must address the panel as 127.0.0.1 (got host 'evil.example:${port}')`);
    const crossOrigin = await get(port, '/api/jobs', { ...bearer, origin: 'http://evil.example' });
    expect(crossOrigin.status).toBe(403);
    expect(JSON.parse(crossOrigin.body).error).toMatch(/^cross-origin requests are refused/);
    expect((await get(port, '/api/jobs', { ...bearer, host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(200);
  });

  it('answers 404 for an unknown route or method, and scrapes /metrics behind the token', async () => {
    const { port } = await startPanel();
    expect(await get(port, '/api/teleport', bearer)).toMatchObject({ status: 404, body: JSON.stringify({ error: 'no route GET /api/teleport' }) });
    expect((await get(port, '/api/jobs', bearer, 'POST')).status).toBe(404);
    expect((await get(port, '/metrics')).status).toBe(401);
    const metrics = await get(port, '/metrics', bearer);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    // prom-client prints an unsampled gauge as `Nan` (Go's parser, Prometheus's, reads it; the strict helper does not), so read one series.
    const total = /^salus_gpu_memory_total_bytes\{gpu="0"\} (\d+)$/m.exec(metrics.body);
    expect(Number(total?.[1])).toBe(harness.service.memoryMap().capacityBytes);
  });

  it('serves static files without the token, but never outside the panel\'s folder', async () => {
    const { port } = await startPanel();
    const index = await get(port, '/');
    // The built panel, or the line saying how to build it.
    expect([200, 503]).toContain(index.status);
    if (index.status === 200) expect(index.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    expect(index.headers['referrer-policy']).toBe('no-referrer');
    // `..` escaped or not, with an escaped slash or not, stays inside: the repository's package.json is never served.
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/%2e%2e%2fpackage.json', '/..%2f..%2fpackage.json']) {
      expect((await get(port, path)).status, path).toBe(404);
    }
    expect((await get(port, '/%E0%A4%A')).status).toBe(400);
    expect((await get(port, '/no-such-file.js')).status).toBe(404);
  });

  it('says plainly when its port is taken', async () => {
    const { port } = await startPanel();
    await expect(startHttp(harness.target, `127.0.0.1:${port}`, TOKEN)).rejects.toThrow(`salus: 127.0.0.1:${port} is already in use`);
  });
});

describe('the WebSocket bridge', () => {
  /** A socket to /api/events and every message it receives. */
  async function connect(port: number, token = TOKEN) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/events?token=${token}`);
    const messages: BridgeMessage[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(String(data)) as BridgeMessage));
    await once(ws, 'open');
    const next = async (match: (message: BridgeMessage) => boolean) => {
      for (let waited = 0; waited < 5000; waited += 20) {
        const found = messages.find(match);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no such message; got ${JSON.stringify(messages).slice(0, 1000)}`);
    };
    const call = (id: number, method: string, ...params: unknown[]) => {
      ws.send(JSON.stringify({ id, method, params }));
      return next((m) => 'id' in m && m.id === id);
    };
    return { ws, messages, next, call };
  }

  it('refuses an upgrade without the token', async () => {
    const { port } = await startPanel();
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/events?token=wrong`);
    const [error] = await once(ws, 'error');
    expect((error as Error).message).toMatch(/401/);
  });

  it('opens with a snapshot, answers the panel\'s calls, and refuses what is not one', async () => {
    const { port } = await startPanel();
    const { peer, jobId } = await harness.job();
    await peer.requestDevice();
    const client = await connect(port);
    expect(client.messages[0]).toMatchObject({ event: { type: 'snapshot' } });
    expect(await client.call(1, 'setPolicy', 'srtf')).toMatchObject({ id: 1, result: { name: 'SRTF' } });
    expect(await client.call(2, 'pauseJob', jobId)).toEqual({ id: 2, result: null });
    expect(harness.service.jobInfos()[0].state).toBe('paused');
    // Checked against the call table, as every host's calls are.
    expect(await client.call(3, 'setShare', jobId, 0)).toMatchObject({ id: 3, error: { message: expect.stringMatching(/^setShare: 1: /) } });
    // Launches from the web are the launcher's to confine; this service has none.
    expect(await client.call(4, 'launchJob', { file: '/jobs/x.js' })).toEqual({ id: 4, error: { message: 'this service does not launch jobs' } });
    // Calls for `salus` alone are no panel calls.
    const refusals = () => client.messages.filter((m) => 'id' in m && m.id === -1);
    client.ws.send(JSON.stringify({ id: 5, method: 'appendOutput', params: [1, 'x'] }));
    expect(await client.next((m) => 'id' in m && m.id === -1)).toMatchObject({ error: { message: expect.stringMatching(/^not a bridge call; expected \{id, method, params\} with method one of snapshot, /) } });
    client.ws.send('{not json');
    await client.next(() => refusals().length === 2);
    expect(client.messages.some((m) => 'id' in m && m.id === 5)).toBe(false);
    // The socket still serves after those.
    expect(await client.call(6, 'resumeJob', jobId)).toEqual({ id: 6, result: null });
    client.ws.close();
    await once(client.ws, 'close');
  });

  it('streams the service\'s changes to every connected panel', async () => {
    const { port } = await startPanel();
    const [a, b] = [await connect(port), await connect(port)];
    const { peer } = await harness.job({ name: 'watched' });
    await peer.requestDevice();
    const running = (m: BridgeMessage) => 'event' in m && m.event.type === 'jobs' && m.event.jobs.some((j) => j.name === 'watched' && j.state === 'running');
    await a.next(running);
    await b.next(running);
    a.ws.close();
    b.ws.close();
    await Promise.all([once(a.ws, 'close'), once(b.ws, 'close')]);
  });
});
