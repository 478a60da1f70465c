// The main process's glue end to end, Electron alone faked: the supervisor
// runs the real `salus serve` (software GPU), the ServiceClient connects to it,
// the panel's calls go through the IPC gate, a real job runs, finishes and is
// notified, and the service is killed and comes back with the saved policy.
// Needs `npm run build` (it spawns dist/, as users do).
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionState, ServiceEvent } from '../../core/protocol/api.js';
import type { PolicyInfo, ServiceSnapshot } from '../../core/protocol/state.js';
import type { PushPayloads, ServiceStatus } from '../../electron/desktopApi.js';
import { createInvokeHandlers, setupIpc, type InvokeEventLike } from '../../electron/ipc.js';
import { setupNotifications } from '../../electron/notifications.js';
import { applySavedKnobs, ServiceClient, setupServiceClient, type ServiceClientControl } from '../../electron/serviceClient.js';
import { serviceArguments, ServiceSupervisor } from '../../electron/serviceSupervisor.js';
import { SettingsStore } from '../../core/platform/settingsFile.js';
import { requireBuild, ROOT, SALUS_BIN } from '../helpers/service.js';

type Listener = (event: InvokeEventLike, ...args: unknown[]) => unknown;
const fromPanel: InvokeEventLike = { sender: { id: 1 }, senderFrame: { url: 'app://salus/index.html', parent: null } };

class FakeNotification extends EventEmitter {
  static shown: FakeNotification[] = [];
  static isSupported() { return true; }
  constructor(readonly options: { title: string; body: string }) { super(); }
  show() { FakeNotification.shown.push(this); }
}

async function until<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('desktop main process against a real salus serve', () => {
  let dir: string;
  let settings: SettingsStore;
  let supervisor: ServiceSupervisor;
  let control: ServiceClientControl;
  const handlers = new Map<string, Listener>();
  const pushes: Array<{ channel: keyof PushPayloads; payload: unknown }> = [];
  const output: string[] = [];
  const invoke = <T>(method: string, ...args: unknown[]) => handlers.get(`salus:${method}`)!(fromPanel, ...args) as Promise<T>;
  const pushed = <K extends keyof PushPayloads>(channel: K) => pushes.filter((p) => p.channel === channel).map((p) => p.payload as PushPayloads[K]);

  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'salus-desktop-'));
    const runtime = join(dir, 'run');
    mkdirSync(runtime, { mode: 0o700 });
    const socketPath = join(runtime, 'salus', 'desktop.sock');
    settings = SettingsStore.load(join(dir, 'userData', 'settings.json'));
    settings.update({ policy: { name: 'SRTF', params: { holdMs: 500 } }, service: { memory: '256MiB' } });

    supervisor = new ServiceSupervisor({
      nodePath: process.execPath,
      args: () => [
        ...serviceArguments({ cliPath: SALUS_BIN, socketPath, logFile: join(dir, 'logs', 'service.log') }),
        '--jobs-dir', join(dir, 'jobs'), '--data-dir', join(dir, 'data'),
      ],
      socketPath,
      // The app's settings file is the service's: policy, knobs and memory reach it through the file alone.
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, SALUS_CONFIG: settings.file },
      initialBackoffMs: 100,
    });
    supervisor.on('output', (line: string) => output.push(line));
    const client = new ServiceClient(undefined, applySavedKnobs(settings, () => {}));
    const window = {
      show: () => null as never,
      push: <K extends keyof PushPayloads>(channel: K, payload: PushPayloads[K]) => { pushes.push({ channel, payload }); },
    };
    control = setupServiceClient({ client, supervisor, settings, push: window.push, log: () => {} });
    setupIpc({ ipcMain: { handle: (channel, listener) => handlers.set(channel, listener) }, trustedWebContentsId: () => 1, handlers: createInvokeHandlers({ client, supervisor }) });
    setupNotifications({ Notification: FakeNotification, client, supervisor, window });
    supervisor.start();
  });

  afterAll(async () => {
    await supervisor?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts the service, connects, and applies the saved policy and knobs', async () => {
    await until('the connection to open', () => pushed('connection').includes('open'));
    expect(pushed('serviceStatus').map((s) => s.state)).toEqual(['starting', 'running']);
    await expect(invoke<ConnectionState>('connectionState')).resolves.toBe('open');
    const snapshot = await invoke<ServiceSnapshot>('snapshot');
    expect(snapshot.policy.name).toBe('SRTF');
    expect(snapshot.policy.params.holdMs).toBe(500);
    expect(snapshot.memory.capacityBytes).toBe(256 * 1024 * 1024);
    await until('the first snapshot event', () => pushed('event').some((e: ServiceEvent) => e.type === 'snapshot'));
    // The service's log also lands in the app's log folder, with times and levels.
    expect(readFileSync(join(dir, 'logs', 'service.log'), 'utf8')).toMatch(/^\S+Z info  salus: GPU /m);
  });

  it('resyncs a freshly loaded page: status, connection and a snapshot', async () => {
    const before = pushes.length;
    control.resync();
    await until('the resync snapshot', () => pushes.slice(before).some((p) => p.channel === 'event' && (p.payload as ServiceEvent).type === 'snapshot'));
    const channels = pushes.slice(before).map((p) => p.channel);
    expect(channels.slice(0, 2)).toEqual(['serviceStatus', 'connection']);
    expect(pushes[before + 1].payload).toBe('open');
  });

  it('changes the policy through IPC and remembers it', async () => {
    const policy = await invoke<PolicyInfo>('setPolicy', 'PACK', { maxLanes: 2 });
    expect(policy).toMatchObject({ name: 'PACK', params: { maxLanes: 2 } });
    await until('the policy to be saved', () => settings.get().policy?.name === 'PACK');
    const saved = JSON.parse(readFileSync(join(dir, 'userData', 'settings.json'), 'utf8'));
    expect(saved.policy).toMatchObject({ name: 'PACK', params: { maxLanes: 2 } });
    await expect(invoke('setPolicyParams', { noSuchKnob: 1 })).rejects.toThrow(/noSuchKnob/);
  });

  it('launches a job file, notifies when it finishes, and a click selects it', async () => {
    const file = join(ROOT, 'test', 'fixtures', 'jobs', 'steps.js');
    const { jobId } = await invoke<{ jobId: string }>('launchJob', { file, name: 'desktop steps', args: ['--iterations', '3'] });
    const notification = await until('a notification', () => FakeNotification.shown.find((n) => n.options.title === 'Job finished: desktop steps'), 60_000);
    expect(notification.options.body).toMatch(/^3 iterations in /);
    notification.emit('click');
    expect(pushed('selectJob')).toEqual([jobId]);
    expect(typeof await invoke<string>('jobOutput', jobId)).toBe('string');
    await expect(invoke('launchJob', { file: join(ROOT, 'package.json') })).rejects.toThrow(/not a job file/);
  });

  it('stores an uploaded job file in the service’s jobs folder', async () => {
    const { file } = await invoke<{ file: string }>('uploadJob', 'dropped.mjs', 'console.log("hi");\n');
    expect(file.startsWith(join(dir, 'jobs'))).toBe(true);
    expect(existsSync(file)).toBe(true);
  });

  it('restarts a killed service, tells the panel and the user, and keeps the saved policy', async () => {
    const before = pushes.length;
    process.kill(supervisor.status.pid!, 'SIGKILL');
    await until('the service to come back', () => pushes.slice(before).some((p) => p.channel === 'connection' && p.payload === 'open'));
    const statuses = pushes.slice(before).filter((p) => p.channel === 'serviceStatus').map((p) => (p.payload as ServiceStatus).state);
    expect(statuses).toEqual(['restarting', 'starting', 'running']);
    expect(pushes.slice(before).filter((p) => p.channel === 'connection').map((p) => p.payload)).toEqual(['closed', 'connecting', 'open']);
    expect(FakeNotification.shown.at(-1)!.options).toMatchObject({ title: 'The Salus service stopped', body: expect.stringMatching(/signal SIGKILL/) });
    expect(supervisor.status.restarts).toBe(1);
    const snapshot = await invoke<ServiceSnapshot>('snapshot');
    expect(snapshot.policy).toMatchObject({ name: 'PACK', params: { maxLanes: 2 } });
    // The service keeps a history: the job of the run before comes back as such, and nothing else.
    expect(snapshot.jobs.map((job) => [job.name, job.state, job.fromEarlierRun])).toEqual([['desktop steps', 'done', true]]);
  });
});
