/**
 * `npm start` where Electron cannot open a window: the start script serves the
 * panel on 127.0.0.1 instead, says why, and prints the address with its token.
 * Real processes (the script, `salus serve`), a real HTTP server and WebSocket.
 * `--no-build` keeps it fast: the build step is covered by startSupport's unit test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EXIT_NO_GPU } from '../../core/protocol/exitCodes.js';
import { requireBuild, ROOT } from '../helpers/service.js';

interface Started {
  child: ChildProcess;
  output: () => string;
  url: URL;
  runtimeDir: string;
}

const started: Started[] = [];
const dirs: string[] = [];

/** Runs `node build/start.mjs --no-build` with `env` over a private runtime and config folder; resolves at the panel line. */
async function start(env: NodeJS.ProcessEnv): Promise<Started> {
  requireBuild();
  const dir = mkdtempSync(join(tmpdir(), 'salus-start-'));
  dirs.push(dir);
  const runtimeDir = join(dir, 'run');
  mkdirSync(runtimeDir, { mode: 0o700 });
  const base = { ...process.env };
  for (const key of ['DISPLAY', 'WAYLAND_DISPLAY', 'SALUS_SOCKET', 'SALUS_TOKEN', 'ELECTRON_OVERRIDE_DIST_PATH']) delete base[key];
  const child = spawn(process.execPath, [join(ROOT, 'build', 'start.mjs'), '--no-build'], {
    env: { ...base, XDG_RUNTIME_DIR: runtimeDir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'state'), XDG_DATA_HOME: join(dir, 'data'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no panel address within 30 s:\n${output}`)), 30_000);
    const check = () => {
      const match = /salus: panel at (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(new URL(match[1]));
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`start exited (${code}) early:\n${output}`)); });
  });
  const entry = { child, output: () => output, url, runtimeDir };
  started.push(entry);
  return entry;
}

function stop(entry: Started): Promise<number | null> {
  if (entry.child.exitCode !== null) return Promise.resolve(entry.child.exitCode);
  return new Promise((resolve) => {
    entry.child.once('exit', (code) => resolve(code));
    entry.child.kill('SIGTERM');
  });
}

/** One bridge call over the panel's WebSocket. */
function bridgeCall(url: URL, method: string): Promise<unknown> {
  const ws = new WebSocket(`ws://${url.host}/api/events?token=${url.searchParams.get('token')}`);
  return new Promise((resolve, reject) => {
    ws.once('open', () => ws.send(JSON.stringify({ id: 1, method, params: [] })));
    ws.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.id !== 1) return;
      ws.close();
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    });
    ws.once('error', reject);
  });
}

afterEach(async () => {
  await Promise.all(started.splice(0).map(stop));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('npm start without a window', () => {
  it('serves the panel on 127.0.0.1 when there is no display, with the token in the printed address', async () => {
    const entry = await start({});
    expect(entry.output()).toContain('salus: not opening a window: no display ($DISPLAY and $WAYLAND_DISPLAY are unset)');
    expect(entry.output()).not.toMatch(/vkCreateInstance|VK_ERROR/);
    expect(entry.url.hostname).toBe('127.0.0.1');
    const token = entry.url.searchParams.get('token');
    expect(token).toMatch(/^[0-9a-f]{20,}$/);

    const page = await fetch(entry.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<div id="root">/);
    const jobs = await fetch(new URL(`/api/jobs?token=${token}`, entry.url));
    expect(jobs.status).toBe(200);
    expect(await jobs.json()).toEqual([]);
    expect((await fetch(new URL('/api/jobs', entry.url))).status).toBe(401);

    // The Launch sheet's examples, as the panel asks for them: the shipped jobs, by path.
    const examples = await bridgeCall(entry.url, 'exampleJobs') as Array<{ name: string; file: string; description: string }>;
    const wgsl = examples.find((example) => example.name === 'wgsl-train');
    expect(wgsl?.file).toBe(join(ROOT, 'assets', 'jobs', 'wgsl-train.js'));
    expect(wgsl?.description).toMatch(/WGSL/);
    expect(examples.map((example) => example.name)).not.toContain('ort-models');

    // The desktop app's socket, so `salus run` in a terminal finds this service.
    const socket = join(entry.runtimeDir, 'salus', 'desktop.sock');
    expect(existsSync(socket)).toBe(true);
    expect(await stop(entry)).toBe(0);
    expect(existsSync(socket)).toBe(false);
  });

  it("says so when Electron's binary is missing on a machine with a display", async () => {
    const entry = await start({ DISPLAY: ':99', ELECTRON_OVERRIDE_DIST_PATH: join(tmpdir(), 'salus-no-electron-here'), ELECTRON_SKIP_BINARY_DOWNLOAD: '1' });
    expect(entry.output()).toContain("salus: not opening a window: Electron's binary is not installed ($ELECTRON_SKIP_BINARY_DOWNLOAD is set)");
    expect((await fetch(new URL(`/api/policy?token=${entry.url.searchParams.get('token')}`, entry.url))).status).toBe(200);
  });
});

// A Vulkan loader pointed at a driver that does not exist stands for a machine with neither a GPU
// driver nor SwiftShader (the service then does not look for SwiftShader either).
describe.runIf(process.platform === 'linux')('a machine without any GPU', () => {
  const noGpu = { ...process.env, VK_ICD_FILENAMES: join(tmpdir(), 'no-such-vulkan-driver.json') };
  const INSTALL = 'sudo apt-get install chromium libvulkan1';

  it('npm start prints the one command that installs a software GPU, not a Vulkan error', () => {
    const env: NodeJS.ProcessEnv = { ...noGpu };
    delete env.DISPLAY;
    const result = spawnSync(process.execPath, [join(ROOT, 'build', 'start.mjs'), '--no-build', '--headless', '--http', '127.0.0.1:0'], { env, encoding: 'utf8', timeout: 30_000 });
    // The service's exit code passes through: no GPU, no restart will help.
    expect(result.status).toBe(EXIT_NO_GPU);
    expect(result.stderr).toContain(`\n    ${INSTALL}\n`);
    expect(result.stdout + result.stderr).not.toMatch(/vkCreateInstance|VK_ERROR|loader_get_json/);
  });

  it("npm test's machine check says the same before any test runs", () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'build', 'checkTestMachine.mjs')], { env: noGpu, encoding: 'utf8', timeout: 60_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^npm test: this machine cannot run the tests yet/);
    expect(result.stderr).toContain(`\n    ${INSTALL}\n`);
    expect(result.stderr).not.toMatch(/vkCreateInstance|VK_ERROR/);
  });
});
