// The preload over fakes of Electron's renderer-side API: what reaches the
// page is a DesktopApi whose every method is one invoke on a channel the main
// process handles, and nothing of ipcRenderer leaks through.
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { INVOKE_SCHEMAS } from '../../../electron/ipc.js';
import { PANEL_CALL_NAMES } from '../../../core/protocol/calls.js';
import { invokeChannel, PUSH_CHANNELS, type DesktopApi, type InvokeMethod } from '../../../electron/desktopApi.js';

/** A stand-in for ipcRenderer: records invokes, answers from `answers`, and lets a test push. */
class FakeIpcRenderer extends EventEmitter {
  invokes: Array<{ channel: string; args: unknown[] }> = [];
  answers = new Map<string, unknown>();
  async invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    this.invokes.push({ channel, args });
    return this.answers.get(channel);
  }
  /** What main's webContents.send(channel, payload) looks like on this side. */
  push(channel: string, payload: unknown): void {
    this.emit(channel, { sender: this, senderId: 0 }, payload);
  }
}

const PRELOAD = fileURLToPath(new URL('../../../electron/preload.cts', import.meta.url));

/**
 * Runs the preload as Electron runs a sandboxed one: compiled to a classic
 * CommonJS body, called with a `require` that knows only 'electron' (here the
 * fakes), so an import of anything else fails as it would in the app.
 */
let compiled: string | null = null;

function runSandboxedPreload(): { exposed: Map<string, unknown>; ipc: FakeIpcRenderer; paths: Map<unknown, string>; required: string[]; exports: Record<string, unknown> } {
  const exposed = new Map<string, unknown>();
  const ipc = new FakeIpcRenderer();
  const paths = new Map<unknown, string>();
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
    ipcRenderer: ipc,
    webUtils: { getPathForFile: (file: unknown) => paths.get(file) ?? '' },
  };
  compiled ??= ts.transpileModule(readFileSync(PRELOAD, 'utf8'), {
    fileName: 'preload.cts',
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const required: string[] = [];
  const sandboxRequire = (name: string) => {
    required.push(name);
    if (name === 'electron') return electron;
    throw new Error(`module not found: ${name}`);
  };
  const exports: Record<string, unknown> = {};
  new Function('require', 'process', 'exports', 'module', compiled)(sandboxRequire, process, exports, { exports });
  return { exposed, ipc, paths, required, exports };
}

describe('preload', () => {
  let api: DesktopApi;
  let ipc: FakeIpcRenderer;
  let exposed: Map<string, unknown>;
  let paths: Map<unknown, string>;
  let required: string[];
  beforeEach(() => {
    ({ exposed, ipc, paths, required } = runSandboxedPreload());
    api = exposed.get('salus') as DesktopApi;
  });

  it('exposes only window.salus, made of plain functions, with no way to ipcRenderer', () => {
    expect(required).toEqual(['electron']);
    expect([...exposed.keys()]).toEqual(['salus']);
    for (const [key, value] of Object.entries(api)) {
      expect(typeof value, key).toBe('function');
      expect(value).not.toBe(ipc);
    }
    expect(Object.values(api)).not.toContain(ipc);
  });

  it('offers every panel call of the call table, and no other', () => {
    const { exports } = runSandboxedPreload();
    expect([...(exports.PANEL_CALLS as string[])].sort()).toEqual([...PANEL_CALL_NAMES].sort());
    for (const method of PANEL_CALL_NAMES) expect(typeof api[method], method).toBe('function');
  });

  it('sends each SalusApi call as one invoke on the channel main handles for it', async () => {
    const handled = new Set(Object.keys(INVOKE_SCHEMAS).map((method) => invokeChannel(method as InvokeMethod)));
    const request = { file: '/jobs/train.js', name: 'train', args: ['--fast'], hints: { iterations: 3 } };
    await api.snapshot();
    await api.setPolicy('SRTF');
    await api.setPolicy('PACK', { maxLanes: 2 });
    await api.setPolicyParams({ holdMs: 100 });
    await api.killJob('j1');
    await api.pauseJob('j2');
    await api.resumeJob('j3');
    await api.setPriority('j4', 5);
    await api.launchJob(request);
    await api.uploadJob('train.js', 'export {}');
    await api.jobOutput('j5');
    expect(ipc.invokes).toEqual([
      { channel: 'salus:snapshot', args: [] },
      { channel: 'salus:setPolicy', args: ['SRTF'] },
      { channel: 'salus:setPolicy', args: ['PACK', { maxLanes: 2 }] },
      { channel: 'salus:setPolicyParams', args: [{ holdMs: 100 }] },
      { channel: 'salus:killJob', args: ['j1'] },
      { channel: 'salus:pauseJob', args: ['j2'] },
      { channel: 'salus:resumeJob', args: ['j3'] },
      { channel: 'salus:setPriority', args: ['j4', 5] },
      { channel: 'salus:launchJob', args: [request] },
      { channel: 'salus:uploadJob', args: ['train.js', 'export {}'] },
      { channel: 'salus:jobOutput', args: ['j5'] },
    ]);
    for (const { channel } of ipc.invokes) expect(handled.has(channel as never), channel).toBe(true);
  });

  it('relays service events without the IPC event object, until unsubscribed', () => {
    const seen: unknown[] = [];
    const stop = api.subscribe((event) => seen.push(event));
    const event = { type: 'metrics', at: 1, busyShare: 0.5, queueLength: 0, iterationsPerSecond: {} };
    ipc.push(PUSH_CHANNELS.event, event);
    stop();
    ipc.push(PUSH_CHANNELS.event, event);
    expect(seen).toEqual([event]);
    expect(ipc.listenerCount(PUSH_CHANNELS.event)).toBe(0);
  });

  it('reports the connection state now, then every change; a push beats a late answer', async () => {
    ipc.answers.set('salus:connectionState', 'open');
    const states: string[] = [];
    api.onConnection((state) => states.push(state));
    await vi.waitFor(() => expect(states).toEqual(['open']));
    ipc.push(PUSH_CHANNELS.connection, 'closed');
    expect(states).toEqual(['open', 'closed']);

    ipc.answers.set('salus:connectionState', 'connecting');
    const late: string[] = [];
    api.onConnection((state) => late.push(state));
    ipc.push(PUSH_CHANNELS.connection, 'open');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(late).toEqual(['open']);
  });

  it('resolves a dropped file to its path only through main’s check', async () => {
    const file = { name: 'train.mjs' };
    paths.set(file, '/home/me/train.mjs');
    ipc.answers.set('salus:checkJobFile', '/home/me/train.mjs');
    await expect(api.pathForDroppedFile(file)).resolves.toBe('/home/me/train.mjs');
    expect(ipc.invokes.at(-1)).toEqual({ channel: 'salus:checkJobFile', args: ['/home/me/train.mjs'] });
    await expect(api.pathForDroppedFile({ name: 'from-the-web.js' })).rejects.toThrow(/not a file on this computer/);
  });

  it('keeps a notification’s job selection for a panel that listens later', () => {
    ipc.push(PUSH_CHANNELS.selectJob, 'j7');
    const selected: string[] = [];
    const stop = api.onSelectJob((jobId) => selected.push(jobId));
    ipc.push(PUSH_CHANNELS.selectJob, 'j8');
    stop();
    expect(selected).toEqual(['j7', 'j8']);
  });
});
