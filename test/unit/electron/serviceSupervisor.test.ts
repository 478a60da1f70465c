// The supervisor with real child processes: small Node scripts that behave
// like `salus serve` (say they listen, then die, hang or refuse to stop).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceStatus } from '../../../electron/desktopApi.js';
import {
  desktopSocketPath, resolveNodeBinary, serviceArguments, serviceCliPath, serviceEnvironment, ServiceSupervisor, type SupervisorOptions,
} from '../../../electron/serviceSupervisor.js';
import { requireBuild, SALUS_BIN } from '../../helpers/service.js';

let dir: string;
const supervisors: ServiceSupervisor[] = [];

/** Writes a script into the test folder and returns its path. */
function script(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

function supervise(file: string, options: Partial<SupervisorOptions> = {}): { supervisor: ServiceSupervisor; statuses: ServiceStatus[] } {
  const supervisor = new ServiceSupervisor({
    nodePath: process.execPath, args: () => [file, '--socket', join(dir, 'svc.sock')], socketPath: join(dir, 'svc.sock'),
    initialBackoffMs: 50, maxBackoffMs: 400, stableAfterMs: 60_000, readyTimeoutMs: 5_000, stopTimeoutMs: 2_000, ...options,
  });
  const statuses: ServiceStatus[] = [];
  supervisor.on('status', (status: ServiceStatus) => statuses.push(status));
  supervisors.push(supervisor);
  return { supervisor, statuses };
}

async function until<T>(check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'salus-supervisor-')); });
afterEach(async () => { await Promise.all(supervisors.splice(0).map((s) => s.stop())); });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ServiceSupervisor', () => {
  it('restarts a service that crashes, telling why, and counts the restart', async () => {
    // Says it listens on the socket it was given, then dies with code 3 after a moment.
    const crashing = script('crashing.mjs', `
      const socket = process.argv[process.argv.indexOf('--socket') + 1];
      console.log('salus: GPU fake');
      console.log('salus: listening on ' + socket);
      setTimeout(() => { console.error('salus: lost the device'); process.exit(3); }, 150);
    `);
    const { supervisor, statuses } = supervise(crashing);
    supervisor.start();
    await until(() => statuses.filter((s) => s.state === 'running').length >= 2);
    const states = statuses.map((s) => s.state);
    expect(states.slice(0, 5)).toEqual(['starting', 'running', 'restarting', 'starting', 'running']);
    const crash = statuses.find((s) => s.state === 'restarting')!;
    expect(crash.message).toMatch(/stopped unexpectedly \(exit code 3\): salus: lost the device; restarting in 50 ms/);
    expect(crash).toMatchObject({ pid: null, restartInMs: 50, consecutiveFailures: 1 });
    expect(statuses[1].message).toBe(`the Salus service is listening on ${join(dir, 'svc.sock')}`);
    expect(statuses[3]).toMatchObject({ state: 'starting', restarts: 1 });
    expect(statuses[3].pid).not.toBe(statuses[0].pid);
  });

  it('leaves a service that found no GPU stopped, saying what to install, instead of restarting it', async () => {
    requireBuild();
    // The real `salus serve`, its Vulkan loader pointed at a driver that does not exist: no GPU, no SwiftShader.
    const { supervisor, statuses } = supervise(SALUS_BIN, {
      args: () => [SALUS_BIN, 'serve', '--socket', join(dir, 'nogpu.sock')],
      env: { ...process.env, VK_ICD_FILENAMES: join(dir, 'no-such-driver.json') },
    });
    supervisor.start();
    const stopped = await until(() => statuses.find((s) => s.state === 'stopped'), 30_000);
    expect(stopped.message).toMatch(/^the Salus service found no GPU: salus: no GPU driver and no software GPU found\. .* sudo apt-get install chromium libvulkan1$/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(statuses.map((s) => s.state)).toEqual(['starting', 'stopped']);
  });

  it('doubles the backoff for failures in a row, up to the cap', async () => {
    const dying = script('dying.mjs', 'process.exit(1);\n');
    const { supervisor, statuses } = supervise(dying);
    supervisor.start();
    await until(() => statuses.filter((s) => s.state === 'restarting').length >= 5);
    await supervisor.stop();
    const delays = statuses.filter((s) => s.state === 'restarting').map((s) => s.restartInMs);
    expect(delays.slice(0, 5)).toEqual([50, 100, 200, 400, 400]);
    expect(statuses.at(-1)).toMatchObject({ state: 'stopped', pid: null });
  });

  it('ends a failure streak after a stable run', async () => {
    const steady = script('steady.mjs', "console.log('salus: listening on x'); setTimeout(() => process.exit(1), 120);\n");
    const { supervisor, statuses } = supervise(steady, { stableAfterMs: 80 });
    supervisor.start();
    await until(() => statuses.filter((s) => s.state === 'restarting').length >= 3);
    expect(statuses.filter((s) => s.state === 'restarting').map((s) => s.consecutiveFailures)).toEqual([1, 1, 1]);
  });

  it('kills a service that never says it listens, and tries again', async () => {
    const silent = script('silent.mjs', 'setInterval(() => {}, 1000);\n');
    const { supervisor, statuses } = supervise(silent, { readyTimeoutMs: 200 });
    supervisor.start();
    const failed = await until(() => statuses.find((s) => s.state === 'restarting'));
    expect(failed.message).toMatch(/signal SIGKILL.*did not start listening within 200 ms/);
  });

  it('reports a Node binary that cannot be started', async () => {
    const { supervisor, statuses } = supervise('unused.mjs', { nodePath: join(dir, 'no-such-node') });
    supervisor.start();
    const failed = await until(() => statuses.find((s) => s.state === 'restarting'));
    expect(failed.message).toMatch(/could not start .*no-such-node: .*ENOENT/);
  });

  it('stops for good: SIGTERM, then SIGKILL for a service that ignores it; no restart after', async () => {
    const stubborn = script('stubborn.mjs', "process.on('SIGTERM', () => {}); console.log('salus: listening on x'); setInterval(() => {}, 1000);\n");
    const { supervisor, statuses } = supervise(stubborn, { stopTimeoutMs: 300 });
    supervisor.start();
    await until(() => statuses.find((s) => s.state === 'running'));
    const started = Date.now();
    await supervisor.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(supervisor.status).toMatchObject({ state: 'stopped', pid: null });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(statuses.at(-1)!.state).toBe('stopped');
    expect(statuses.some((s) => s.state === 'restarting')).toBe(false);
  });

  it('reads the arguments afresh at every start (changed settings apply on restart)', async () => {
    const echo = script('echo.mjs', "console.log('salus: listening on ' + process.argv.slice(2).join(' ')); setTimeout(() => process.exit(1), 50);\n");
    let policy = 'FIFO';
    const { supervisor, statuses } = supervise(echo, { args: () => [echo, '--policy', policy] });
    supervisor.start();
    await until(() => statuses.find((s) => s.state === 'running'));
    policy = 'SRTF';
    await until(() => statuses.filter((s) => s.state === 'running').length >= 2);
    expect(statuses.filter((s) => s.state === 'running').map((s) => s.message.split(' ').at(-1))).toEqual(['FIFO', 'SRTF']);
  });
});

describe('service launch details', () => {
  it('finds Node: $SALUS_NODE, else the bundled one when packaged, else node on PATH', () => {
    const base = { isPackaged: false, resourcesPath: '/opt/Salus/resources', env: {}, platform: 'linux' as const };
    expect(resolveNodeBinary(base)).toBe('node');
    expect(resolveNodeBinary({ ...base, isPackaged: true })).toBe('/opt/Salus/resources/node/bin/node');
    expect(resolveNodeBinary({ ...base, isPackaged: true, platform: 'win32' })).toMatch(/node[\\/]bin[\\/]node\.exe$/);
    expect(resolveNodeBinary({ ...base, isPackaged: true, env: { SALUS_NODE: '/usr/local/bin/node22' } })).toBe('/usr/local/bin/node22');
  });

  it('runs the CLI from the unpacked copy beside app.asar', () => {
    expect(serviceCliPath('/opt/Salus/resources/app.asar')).toBe('/opt/Salus/resources/app.asar.unpacked/bin/salus.js');
    expect(serviceCliPath('/work/salus')).toBe('/work/salus/bin/salus.js');
  });

  it('builds salus serve’s arguments from the settings', () => {
    expect(serviceArguments({ cliPath: '/a/bin/salus.js', socketPath: '/run/s.sock' })).toEqual(['/a/bin/salus.js', 'serve', '--socket', '/run/s.sock']);
    expect(serviceArguments({ cliPath: 'c', socketPath: 's', logFile: '/logs/service.log' })).toEqual(['c', 'serve', '--socket', 's', '--log-file', '/logs/service.log']);
  });

  it('keeps Electron’s switches out of the service’s environment', () => {
    expect(serviceEnvironment({ PATH: '/bin', ELECTRON_RUN_AS_NODE: '1', ELECTRON_NO_ASAR: '1' })).toEqual({ PATH: '/bin' });
  });

  it('gives the app its own socket, beside salus serve’s default', () => {
    expect(desktopSocketPath({ platform: 'linux', env: { XDG_RUNTIME_DIR: '/run/user/1000' }, tmpdir: '/tmp', user: 'ada' })).toBe('/run/user/1000/salus/desktop.sock');
    expect(desktopSocketPath({ platform: 'darwin', env: {}, tmpdir: '/var/folders/xy/T', user: 'ada lovelace' })).toBe('/var/folders/xy/T/salus-ada_lovelace/salus/desktop.sock');
    expect(desktopSocketPath({ platform: 'win32', env: {}, tmpdir: 'C:\\Temp', user: 'ada' })).toBe('\\\\.\\pipe\\salus-desktop-ada');
  });
});
