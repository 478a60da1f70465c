/**
 * The web panel as an attack surface: a page on another site (or a domain
 * rebound to 127.0.0.1) cannot reach the API, addresses never leak as a
 * referrer, bad escapes are refused, and the bridge launches only the files a
 * panel may launch — without handing the token to the job.
 */
import { request } from 'node:http';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ROOT, startService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/rawSocket.js';

const TOKEN = 'guard-test-token-0123456789abcdef';
let service: TestService;
let base: URL;

beforeAll(async () => {
  service = await startService(['--http', '127.0.0.1:0', '--memory', '64MiB'], { SALUS_TOKEN: TOKEN });
  const printed = await until(() => /salus: panel at (\S+)/.exec(service.log()), 'the panel URL');
  base = new URL(printed[1]);
});
afterAll(async () => { await service?.stop(); });

/** A raw GET with the headers given (fetch may not set Host). */
function get(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path, headers }, (response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One bridge call over the panel's WebSocket. */
async function bridgeCall(method: string, params: unknown[]): Promise<{ result?: any; error?: { message: string } }> {
  const ws = new WebSocket(`ws://${base.host}/api/events?token=${TOKEN}`);
  try {
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    return await new Promise((resolve) => {
      ws.on('message', (data) => {
        const message = JSON.parse(String(data));
        if (message.id === 1) resolve(message);
      });
      ws.send(JSON.stringify({ id: 1, method, params }));
    });
  } finally {
    ws.close();
  }
}

describe('requests from elsewhere', () => {
  it('refuses a rebound host name and a foreign origin, even with the token', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await get('/api/jobs', { ...auth, host: base.host })).status).toBe(200);
    expect((await get('/api/jobs', { ...auth, host: `localhost:${base.port}` })).status).toBe(200);
    const rebound = await get('/api/jobs', { ...auth, host: `evil.example:${base.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/evil\.example/);
    expect((await get('/metrics', { ...auth, host: base.host, origin: 'http://evil.example' })).status).toBe(403);
    expect((await get('/api/jobs', { ...auth, host: base.host, origin: `http://${base.host}` })).status).toBe(200);

    const upgrade = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://${base.host}/api/events?token=${TOKEN}`, { origin: 'http://evil.example' });
      ws.on('unexpected-response', (_request, response) => { resolve(response.statusCode ?? 0); ws.terminate(); });
      ws.on('open', () => { resolve(101); ws.close(); });
      ws.on('error', () => undefined);
    });
    expect(upgrade).toBe(403);
  });

  it('sends no referrer and answers a bad escape with 400', async () => {
    const page = await get('/', { host: base.host });
    expect(page.status).toBe(200);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect((await get('/%E0%A4%A', { host: base.host })).status).toBe(400);
    expect((await get('/assets/%ZZ.js', { host: base.host })).status).toBe(400);
  });
});

describe('launching from the web panel', () => {
  it('runs only uploaded files and the shipped examples; other paths are refused with what to do', async () => {
    const outside = await bridgeCall('launchJob', [{ file: join(ROOT, 'test/fixtures/jobs/steps.js') }]);
    expect(outside.error?.message).toMatch(/may launch only \.js or \.mjs files .*salus run FILE/);
    const notJs = await bridgeCall('launchJob', [{ file: join(ROOT, 'package.json') }]);
    expect(notJs.error?.message).toMatch(/may launch only/);
    expect((await service.json<unknown[]>(['jobs'])).length).toBe(0);
  });

  it('does not hand the token to the job, and removes the uploaded file when the job ends', async () => {
    const source = `
      const adapter = await navigator.gpu.requestAdapter();
      const device = await adapter.requestDevice();
      device.destroy();
      console.log('token seen: ' + (process.env.SALUS_TOKEN ?? 'none'));
    `;
    const stored = await bridgeCall('uploadJob', ['peek.mjs', source]);
    expect(stored.error).toBeUndefined();
    const file: string = stored.result.file;
    expect(existsSync(file)).toBe(true);
    const launched = await bridgeCall('launchJob', [{ file, name: 'peek' }]);
    expect(launched.error).toBeUndefined();
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'peek' && j.state === 'done'));
    const control = await service.control();
    let output = '';
    for (let tries = 0; tries < 100 && !output.includes('token seen'); tries++) {
      output = await control.call<string>('jobOutput', job.id);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(output).toContain('token seen: none');
    expect(output).not.toContain(TOKEN);
    await until(() => !existsSync(file), 'the uploaded file to be removed');
    expect(readdirSync(join(service.dir, 'jobs'))).toEqual([]);
  });
});

describe('the cluster view\'s route', () => {
  // A service whose PATH has no Slurm: the route answers {available: false} rather than failing.
  let bare: TestService;
  let bareBase: URL;
  beforeAll(async () => {
    bare = await startService(['--http', '127.0.0.1:0', '--memory', '64MiB'], { SALUS_TOKEN: TOKEN, PATH: mkdtempSync(join(tmpdir(), 'salus-no-slurm-')) });
    bareBase = new URL((await until(() => /salus: panel at (\S+)/.exec(bare.log()), 'the panel URL'))[1]);
  });
  afterAll(async () => { await bare?.stop(); });

  it('needs the token, the panel\'s host and origin like the other API routes, and says when there is no Slurm', async () => {
    const at = (path: string, headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: bareBase.hostname, port: bareBase.port, path, headers }, (response) => {
        let body = '';
        response.on('data', (chunk) => { body += chunk; });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    const host = bareBase.host;
    expect((await at('/api/cluster', { host })).status).toBe(401);
    expect((await at('/api/cluster?token=wrong', { host })).status).toBe(401);
    expect((await at('/api/cluster', { authorization: `Bearer ${TOKEN}`, host: `evil.example:${bareBase.port}` })).status).toBe(403);
    expect((await at('/api/cluster', { authorization: `Bearer ${TOKEN}`, host, origin: 'http://evil.example' })).status).toBe(403);
    const answer = await at('/api/cluster', { authorization: `Bearer ${TOKEN}`, host });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ available: false, reason: expect.stringMatching(/Slurm not found \(no `squeue` on PATH\)/) });
  });

  it('answers clusterJobs over the bridge too, and refuses a kill of something that is not a Slurm id', async () => {
    const ws = new WebSocket(`ws://${bareBase.host}/api/events?token=${TOKEN}`);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const answers = new Map<number, any>();
    ws.on('message', (data) => { const m = JSON.parse(String(data)); if (typeof m.id === 'number') answers.set(m.id, m); });
    ws.send(JSON.stringify({ id: 1, method: 'clusterJobs', params: [] }));
    ws.send(JSON.stringify({ id: 2, method: 'killClusterJob', params: ['1; rm -rf /'] }));
    ws.send(JSON.stringify({ id: 3, method: 'killClusterJob', params: ['123'] }));
    await until(() => answers.size === 3, 'three answers');
    ws.close();
    expect(answers.get(1).result).toMatchObject({ available: false });
    expect(answers.get(2).error.message).toMatch(/Slurm job id/);
    expect(answers.get(3).error.message).toMatch(/Slurm not found \(no `(squeue|scancel)` on PATH\)/);
  });
});
