/**
 * Where the service listens, and where clients look for it.
 *
 * `salus serve` listens at `--socket`, else `$SALUS_SOCKET`, else a per-user path
 * (`$XDG_RUNTIME_DIR/salus/salus.sock`, or a folder in the temp dir named after
 * the user; a named pipe on Windows). The desktop app runs its own service
 * beside it (`…/salus/desktop.sock`), so a headless service the user starts by
 * hand never collides with the app's. Clients (`salus run`, `salus jobs`, …)
 * use the default, or the app's service when only that one is running. The
 * default folders must be the user's own and private (0700): one that another
 * user owns is refused, since they could replace the socket with their own.
 */
import { mkdirSync, chmodSync, lstatSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

/** What the paths depend on (the current process's by default; tests pass their own). */
export interface SocketContext {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  tmpdir: string;
  user: string;
  /** Who must own the default folders (the current process's uid when absent). */
  uid?: number;
}

function currentContext(): SocketContext {
  return { platform: process.platform, env: process.env, tmpdir: tmpdir(), user: currentUser() };
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'user');
  }
}

function socketFile(context: SocketContext, name: 'salus' | 'desktop'): string {
  const user = context.user.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (context.platform === 'win32') return `\\\\.\\pipe\\${name === 'salus' ? 'salus' : 'salus-desktop'}-${user}`;
  return join(context.env.XDG_RUNTIME_DIR || join(context.tmpdir, `salus-${user}`), 'salus', `${name}.sock`);
}

/** The per-user default where `salus serve` listens. */
export function defaultSocketPath(context: SocketContext = currentContext()): string {
  return socketFile(context, 'salus');
}

/** The desktop app's own service (`…/salus/desktop.sock`, `\\.\pipe\salus-desktop-<user>`). */
export function desktopSocketPath(context: SocketContext = currentContext()): string {
  return socketFile(context, 'desktop');
}

/** Where `salus serve` listens: `explicit`, else `$SALUS_SOCKET`, else the per-user default. */
export function resolveSocketPath(explicit?: string, context: SocketContext = currentContext()): string {
  return explicit || context.env.SALUS_SOCKET || defaultSocketPath(context);
}

/** Whether something accepts connections at `socketPath` (connects, then hangs up at once). */
export function isListening(socketPath: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (listening: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(listening);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Where a client finds the service: `explicit`, else `$SALUS_SOCKET`, else the
 * per-user default — unless no service listens there and the desktop app's
 * does; then the app's. When neither listens, the default (so errors name it).
 * Throws when a default folder belongs to another user (see `checkOwnFolder`).
 */
export async function findServiceSocket(explicit?: string, context: SocketContext = currentContext()): Promise<string> {
  const chosen = resolveSocketPath(explicit, context);
  if (explicit || context.env.SALUS_SOCKET) return chosen;
  for (const dir of defaultFolders(context)) checkOwnFolder(dir, { create: false, uid: context.uid });
  if (await isListening(chosen)) return chosen;
  const desktop = desktopSocketPath(context);
  return (await isListening(desktop)) ? desktop : chosen;
}

/** The folders of the default sockets that must be the user's own, outermost first (none for named pipes). */
export function defaultFolders(context: SocketContext = currentContext()): string[] {
  if (context.platform === 'win32') return [];
  const dir = dirname(defaultSocketPath(context));
  // Without $XDG_RUNTIME_DIR the folder sits in the shared temp dir, inside `salus-<user>`: both must be ours.
  return context.env.XDG_RUNTIME_DIR ? [dir] : [dirname(dir), dir];
}

/**
 * Checks that `dir` is a folder of the user `uid` (the current one by default)
 * that no one else can open, creating it 0700 when missing (with `create`) and
 * making one of ours 0700 when it is not. Throws, saying what to do, when it
 * belongs to someone else or is not a folder.
 */
export function checkOwnFolder(dir: string, options: { create: boolean; uid?: number }): void {
  const uid = options.uid ?? process.getuid?.();
  if (options.create) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // Something else is in the way: said below.
    }
  }
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return; // Missing, and not ours to create: nothing listens there.
  }
  const instead = 'remove it, or set SALUS_SOCKET (or --socket) to a path in a folder of your own';
  if (!stat.isDirectory()) throw new Error(`salus: ${dir} should be the socket's folder but is not a folder; ${instead}`);
  if (uid !== undefined && stat.uid !== uid) {
    throw new Error(`salus: the socket folder ${dir} belongs to another user (uid ${stat.uid}), who could replace the service's socket; ${instead}`);
  }
  if ((stat.mode & 0o077) !== 0 && options.create) chmodSync(dir, 0o700);
}

/**
 * Prepares the socket's folder (no-op for named pipes). The default folders
 * are made the user's own and private (see `checkOwnFolder`). Another path is
 * the user's choice: a missing folder is created 0700, an existing one keeps
 * its mode (`--socket s.sock` must not lock the user's working folder); the
 * socket's own mode (0600) still keeps other users out.
 */
export function prepareSocketDir(socketPath: string, context: SocketContext = currentContext()): void {
  if (context.platform === 'win32') return;
  const dir = dirname(socketPath);
  if (socketPath === defaultSocketPath(context) || socketPath === desktopSocketPath(context)) {
    for (const folder of defaultFolders(context)) checkOwnFolder(folder, { create: true, uid: context.uid });
    return;
  }
  const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (created === undefined) return;
  try {
    // mkdir's mode is masked by the umask; the folders made here are ours.
    chmodSync(dir, 0o700);
  } catch {
    // Not ours to change after all (a race with another process): the socket's own mode still applies.
  }
}
