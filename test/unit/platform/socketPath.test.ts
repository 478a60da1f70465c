import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkOwnFolder, defaultFolders, defaultSocketPath, desktopSocketPath, findServiceSocket, isListening, prepareSocketDir,
  resolveSocketPath, type SocketContext,
} from '../../../core/platform/socketPath.js';

describe('socket paths', () => {
  it('puts the default and the desktop app\'s socket side by side, per user', () => {
    const linux: SocketContext = { platform: 'linux', env: { XDG_RUNTIME_DIR: '/run/user/1000' }, tmpdir: '/tmp', user: 'ada' };
    expect(defaultSocketPath(linux)).toBe('/run/user/1000/salus/salus.sock');
    expect(desktopSocketPath(linux)).toBe('/run/user/1000/salus/desktop.sock');
    const mac: SocketContext = { platform: 'darwin', env: {}, tmpdir: '/var/folders/xy/T', user: 'ada lovelace' };
    expect(defaultSocketPath(mac)).toBe('/var/folders/xy/T/salus-ada_lovelace/salus/salus.sock');
    const windows: SocketContext = { platform: 'win32', env: {}, tmpdir: 'C:\\Temp', user: 'ada' };
    expect(defaultSocketPath(windows)).toBe('\\\\.\\pipe\\salus-ada');
    expect(desktopSocketPath(windows)).toBe('\\\\.\\pipe\\salus-desktop-ada');
  });

  it('lets --socket win over $SALUS_SOCKET, and both over the default', () => {
    const context: SocketContext = { platform: 'linux', env: { SALUS_SOCKET: '/x/env.sock', XDG_RUNTIME_DIR: '/run/u' }, tmpdir: '/tmp', user: 'ada' };
    expect(resolveSocketPath('/x/flag.sock', context)).toBe('/x/flag.sock');
    expect(resolveSocketPath(undefined, context)).toBe('/x/env.sock');
    expect(resolveSocketPath(undefined, { ...context, env: { XDG_RUNTIME_DIR: '/run/u' } })).toBe('/run/u/salus/salus.sock');
  });
});

describe('findServiceSocket', () => {
  let dir: string;
  let context: SocketContext;
  const servers: Server[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'salus-sock-'));
    mkdirSync(join(dir, 'salus'));
    context = { platform: process.platform, env: { XDG_RUNTIME_DIR: dir }, tmpdir: tmpdir(), user: 'tester' };
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
  });

  const listen = (path: string) => new Promise<void>((resolve) => {
    const server = createServer((socket) => socket.destroy());
    servers.push(server);
    server.listen(path, resolve);
  });

  it('uses the default when nothing listens anywhere, so errors name it', async () => {
    expect(await findServiceSocket(undefined, context)).toBe(defaultSocketPath(context));
    expect(await isListening(defaultSocketPath(context))).toBe(false);
  });

  it('finds the desktop app\'s service when it is the only one', async () => {
    await listen(desktopSocketPath(context));
    expect(await findServiceSocket(undefined, context)).toBe(desktopSocketPath(context));
  });

  it('prefers a service on the default socket, and skips a stale socket file there', async () => {
    await listen(desktopSocketPath(context));
    writeFileSync(defaultSocketPath(context), 'left behind by a crash');
    expect(await findServiceSocket(undefined, context)).toBe(desktopSocketPath(context));
    rmSync(defaultSocketPath(context));
    await listen(defaultSocketPath(context));
    expect(await findServiceSocket(undefined, context)).toBe(defaultSocketPath(context));
  });

  it('never second-guesses --socket or $SALUS_SOCKET', async () => {
    await listen(desktopSocketPath(context));
    const elsewhere = join(dir, 'elsewhere.sock');
    expect(await findServiceSocket(elsewhere, context)).toBe(elsewhere);
    expect(await findServiceSocket(undefined, { ...context, env: { ...context.env, SALUS_SOCKET: elsewhere } })).toBe(elsewhere);
  });
});

describe('the default socket folders', () => {
  let dir: string;
  const me = process.getuid!();
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-own-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('are made the user\'s own and private in the temp dir: salus-<user> and its salus folder', () => {
    const context: SocketContext = { platform: 'linux', env: {}, tmpdir: dir, user: 'ada' };
    mkdirSync(join(dir, 'salus-ada'), { mode: 0o777 });
    chmodSync(join(dir, 'salus-ada'), 0o777); // ours, but open to everyone
    prepareSocketDir(defaultSocketPath(context), context);
    expect(defaultFolders(context)).toEqual([join(dir, 'salus-ada'), join(dir, 'salus-ada', 'salus')]);
    expect(modeOf(join(dir, 'salus-ada'))).toBe(0o700);
    expect(modeOf(join(dir, 'salus-ada', 'salus'))).toBe(0o700);
  });

  it('are refused when another user owns one, by the service and by its clients, saying what to do', async () => {
    mkdirSync(join(dir, 'salus-ada', 'salus'), { recursive: true });
    // The folders are ours; seen as a process of another uid, they belong to someone else.
    const stranger: SocketContext = { platform: 'linux', env: {}, tmpdir: dir, user: 'ada', uid: me + 1 };
    expect(() => prepareSocketDir(defaultSocketPath(stranger), stranger)).toThrow(
      new RegExp(`the socket folder ${join(dir, 'salus-ada')} belongs to another user \\(uid ${me}\\).*SALUS_SOCKET`),
    );
    await expect(findServiceSocket(undefined, stranger)).rejects.toThrow(/belongs to another user/);
    // A path the user names is theirs to choose.
    expect(await findServiceSocket(join(dir, 'mine.sock'), stranger)).toBe(join(dir, 'mine.sock'));
  });

  it('must be folders, and a client does not create or change them', async () => {
    writeFileSync(join(dir, 'salus-ada'), 'not a folder');
    const context: SocketContext = { platform: 'linux', env: {}, tmpdir: dir, user: 'ada' };
    expect(() => checkOwnFolder(join(dir, 'salus-ada'), { create: false })).toThrow(/is not a folder/);
    const open = join(dir, 'open');
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    checkOwnFolder(open, { create: false });
    expect(modeOf(open)).toBe(0o755);
    checkOwnFolder(join(dir, 'missing'), { create: false });
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    expect(() => prepareSocketDir(defaultSocketPath(context), context)).toThrow(/is not a folder/);
  });
});
