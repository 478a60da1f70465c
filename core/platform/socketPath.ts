/**
 * Where the service listens: `--socket`, else `$SALUS_SOCKET`, else a per-user
 * path (`$XDG_RUNTIME_DIR/salus/salus.sock`, or a folder in the temp dir named
 * after the user; a named pipe on Windows). The folder is created 0700 so only
 * its user can connect.
 */
import { mkdirSync, chmodSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

/** The socket path to use, from an explicit value, the environment, or the per-user default. */
export function resolveSocketPath(explicit?: string): string {
  if (explicit) return explicit;
  if (process.env.SALUS_SOCKET) return process.env.SALUS_SOCKET;
  const user = safeUserName();
  if (process.platform === 'win32') return `\\\\.\\pipe\\salus-${user}`;
  const base = process.env.XDG_RUNTIME_DIR || join(tmpdir(), `salus-${user}`);
  return join(base, 'salus', 'salus.sock');
}

/** Creates the socket's folder, private to the current user (no-op for named pipes). */
export function prepareSocketDir(socketPath: string): void {
  if (process.platform === 'win32') return;
  const dir = dirname(socketPath);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch {
    // A shared folder the user does not own (e.g. /tmp itself): the socket's own mode still applies.
  }
}

function safeUserName(): string {
  try {
    return userInfo().username.replace(/[^A-Za-z0-9_.-]/g, '_');
  } catch {
    return String(process.getuid?.() ?? 'user');
  }
}
