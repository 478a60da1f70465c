// The IPC gate with a fake ipcMain: calls from anything but our window's main
// frame on app://salus are refused, bad arguments are refused with a message
// naming the method and the field, and good ones reach the real handlers
// (here over a real ServiceClient that is not connected, and real files).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvokeHandlers, INVOKE_SCHEMAS, setupIpc, type InvokeEventLike } from '../../../electron/ipc.js';
import { ServiceClient } from '../../../electron/serviceClient.js';
import { ServiceSupervisor } from '../../../electron/serviceSupervisor.js';

type Listener = (event: InvokeEventLike, ...args: unknown[]) => unknown;

/** Records ipcMain.handle registrations and calls them as Electron would. */
class FakeIpcMain {
  readonly handlers = new Map<string, Listener>();
  handle(channel: string, listener: Listener): void {
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
    this.handlers.set(channel, listener);
  }
  async invoke(event: InvokeEventLike, channel: string, ...args: unknown[]): Promise<unknown> {
    const listener = this.handlers.get(channel);
    if (!listener) throw new Error(`No handler registered for '${channel}'`);
    return listener(event, ...args);
  }
}

const WINDOW_ID = 7;
const fromPanel: InvokeEventLike = { sender: { id: WINDOW_ID }, senderFrame: { url: 'app://salus/index.html', parent: null } };

describe('IPC gate', () => {
  const ipcMain = new FakeIpcMain();
  const client = new ServiceClient(async () => { throw new Error('no service in this test'); });
  const supervisor = new ServiceSupervisor({ nodePath: 'node', args: () => [], socketPath: '/tmp/none.sock' });
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'salus-ipc-'));
    writeFileSync(join(dir, 'train.mjs'), 'export {};\n');
    writeFileSync(join(dir, 'notes.txt'), 'hello\n');
    mkdirSync(join(dir, 'folder.js'));
    setupIpc({ ipcMain, trustedWebContentsId: () => WINDOW_ID, handlers: createInvokeHandlers({ client, supervisor }) });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('handles one channel per SalusApi method plus the desktop ones', () => {
    expect([...ipcMain.handlers.keys()].sort()).toEqual(Object.keys(INVOKE_SCHEMAS).map((m) => `salus:${m}`).sort());
    expect(ipcMain.handlers.size).toBe(17);
  });

  it('answers the panel', async () => {
    await expect(ipcMain.invoke(fromPanel, 'salus:connectionState')).resolves.toBe('closed');
    await expect(ipcMain.invoke(fromPanel, 'salus:serviceStatus')).resolves.toMatchObject({ state: 'stopped', socketPath: '/tmp/none.sock' });
  });

  it.each([
    ['another web contents', { sender: { id: 8 }, senderFrame: { url: 'app://salus/index.html', parent: null } }, /not the Salus window/],
    ['a subframe of our window', { sender: { id: WINDOW_ID }, senderFrame: { url: 'app://salus/index.html', parent: {} } }, /subframe/],
    ['a web page that got into our window', { sender: { id: WINDOW_ID }, senderFrame: { url: 'https://evil.example/', parent: null } }, /not the Salus panel/],
    ['a file:// page', { sender: { id: WINDOW_ID }, senderFrame: { url: 'file:///tmp/index.html', parent: null } }, /not the Salus panel/],
    ['another app:// host', { sender: { id: WINDOW_ID }, senderFrame: { url: 'app://other/index.html', parent: null } }, /not the Salus panel/],
    ['a frame that is gone', { sender: { id: WINDOW_ID }, senderFrame: null }, /frame that is gone/],
  ] satisfies Array<[string, InvokeEventLike, RegExp]>)('refuses %s', async (_what, event, reason) => {
    await expect(ipcMain.invoke(event, 'salus:snapshot')).rejects.toThrow(reason);
    await expect(ipcMain.invoke(event, 'salus:killJob', 'j1')).rejects.toThrow(/killJob refused/);
  });

  it('refuses everything once there is no window', async () => {
    const lone = new FakeIpcMain();
    setupIpc({ ipcMain: lone, trustedWebContentsId: () => null, handlers: createInvokeHandlers({ client, supervisor }) });
    await expect(lone.invoke(fromPanel, 'salus:snapshot')).rejects.toThrow(/not the Salus window/);
  });

  it.each([
    ['salus:setPriority', ['j1', 'high'], /setPriority: invalid arguments: 1: .*number/i],
    ['salus:setPriority', ['j1', Number.NaN], /setPriority: invalid arguments/],
    ['salus:killJob', [], /killJob: invalid arguments/],
    ['salus:killJob', ['j1', 'extra'], /killJob: invalid arguments/],
    ['salus:killJob', [''], /killJob: invalid arguments: 0:/],
    ['salus:killClusterJob', ['1; rm -rf /'], /killClusterJob: invalid arguments: 0:/],
    ['salus:setPolicy', ['BOGUS'], /setPolicy: invalid arguments: 0:/],
    ['salus:setPolicyParams', [{ holdMs: 'soon' }], /setPolicyParams: invalid arguments/],
    ['salus:launchJob', [{ file: '/x.js', evil: true }], /launchJob: invalid arguments/],
    ['salus:launchJob', [{ file: '/x.js', hints: { iterations: -1 } }], /launchJob: invalid arguments: 0\.hints\.iterations/],
    ['salus:uploadJob', ['../../.bashrc.js', 'x'], /uploadJob: invalid arguments: 0:/],
    ['salus:uploadJob', ['notes.txt', 'x'], /uploadJob: invalid arguments: 0:/],
    ['salus:checkJobFile', [42], /checkJobFile: invalid arguments/],
    ['salus:snapshot', ['unexpected'], /snapshot: invalid arguments/],
  ])('refuses %s with bad arguments %j', async (channel, args, message) => {
    await expect(ipcMain.invoke(fromPanel, channel, ...args)).rejects.toThrow(message);
  });

  it('forwards valid calls to the service, which says plainly that it is not connected', async () => {
    await expect(ipcMain.invoke(fromPanel, 'salus:snapshot')).rejects.toThrow(/service is not connected/);
    await expect(ipcMain.invoke(fromPanel, 'salus:setPolicy', 'SRTF', { holdMs: 10 })).rejects.toThrow(/not connected/);
    await expect(ipcMain.invoke(fromPanel, 'salus:setPriority', 'j1', 3)).rejects.toThrow(/not connected/);
  });

  it('checks job files on disk: exists, is a file, is .js or .mjs', async () => {
    await expect(ipcMain.invoke(fromPanel, 'salus:checkJobFile', join(dir, 'train.mjs'))).resolves.toBe(join(dir, 'train.mjs'));
    await expect(ipcMain.invoke(fromPanel, 'salus:checkJobFile', join(dir, 'missing.js'))).rejects.toThrow(/does not exist/);
    await expect(ipcMain.invoke(fromPanel, 'salus:checkJobFile', join(dir, 'folder.js'))).rejects.toThrow(/is not a file/);
    await expect(ipcMain.invoke(fromPanel, 'salus:checkJobFile', join(dir, 'notes.txt'))).rejects.toThrow(/not a job file/);
    await expect(ipcMain.invoke(fromPanel, 'salus:checkJobFile', 'train.mjs')).rejects.toThrow(/not an absolute path/);
  });

  it('checks a launch request’s file before the service sees it', async () => {
    await expect(ipcMain.invoke(fromPanel, 'salus:launchJob', { file: join(dir, 'notes.txt') })).rejects.toThrow(/not a job file/);
    await expect(ipcMain.invoke(fromPanel, 'salus:launchJob', { file: join(dir, 'train.mjs') })).rejects.toThrow(/not connected/);
  });
});
