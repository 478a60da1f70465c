/**
 * Where the service keeps what must outlive it (its job history, uploaded job
 * files): `salus serve --data-dir DIR`, else `$XDG_DATA_HOME/salus`, else the
 * platform's data folder — `~/.local/share/salus` on Linux and other Unixes,
 * `~/Library/Application Support/salus` on macOS, `%LOCALAPPDATA%\salus` on Windows.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** What the data folder depends on (the process's, unless a test says otherwise). */
export interface DataDirContext {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  home: string;
}

/** The service's data folder, absolute. */
export function resolveDataDir(configured: string | undefined, context: DataDirContext = {
  env: process.env, platform: process.platform, home: homedir(),
}): string {
  if (configured) return resolve(configured);
  const { env, platform, home } = context;
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'salus');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'salus');
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'salus');
  return join(home, '.local', 'share', 'salus');
}

/** The history database's file inside the data folder. */
export const HISTORY_FILE_NAME = 'history.sqlite3';
