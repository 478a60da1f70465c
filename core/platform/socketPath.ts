/**
 * Where the service listens, and where clients look for it.
 *
 * `salus serve` listens at `--socket`, else `$SALUS_SOCKET`, else a per-user path
 * (`$XDG_RUNTIME_DIR/salus/salus.sock`, or a folder in the temp dir named after
 * the user; a named pipe on Windows). The desktop app runs its own service
 * beside it (`…/salus/desktop.sock`), so a headless service the user starts by
 * hand never collides with the app's. Clients (`salus run`, `salus jobs`, …)
 * use the default, or the app's service when only that one is running. The
 * folder is created 0700 so only its user can connect.
 */
import { mkdirSync, chmodSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

/** What the paths depend on (the current process's by default; tests pass their own). */
export interface SocketContext {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  tmpdir: string;
  user: string;
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
 */
export async function findServiceSocket(explicit?: string, context: SocketContext = currentContext()): Promise<string> {
  const chosen = resolveSocketPath(explicit, context);
  if (explicit || context.env.SALUS_SOCKET) return chosen;
  if (await isListening(chosen)) return chosen;
  const desktop = desktopSocketPath(context);
  return (await isListening(desktop)) ? desktop : chosen;
}

/**
 * Creates the socket's folder when it is missing, private to the current user
 * (no-op for named pipes). A folder that already exists is the user's to
 * manage and keeps its mode (`--socket s.sock` must not lock the user's working
 * folder); the socket's own mode (0600) still keeps other users out.
 */
export function prepareSocketDir(socketPath: string): void {
  if (process.platform === 'win32') return;
  const dir = dirname(socketPath);
  const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (created === undefined) return;
  try {
    // mkdir's mode is masked by the umask; the folders made here are ours.
    chmodSync(dir, 0o700);
  } catch {
    // Not ours to change after all (a race with another process): the socket's own mode still applies.
  }
}
