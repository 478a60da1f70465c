// @ts-check
/**
 * What `npm start` (build/start.mjs) decides before anything runs: whether the
 * build is current, whether Electron can open a window here, and which of the
 * service's output lines are Dawn's own noise. Plain JavaScript, because it runs
 * before the TypeScript is compiled.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root folder. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What `npm run build` compiles from, relative to the root (folders are walked). */
export const BUILD_SOURCES = ['core', 'electron', 'renderer', 'bin', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
/** One output of each of `npm run build`'s three steps. */
export const BUILD_OUTPUTS = ['dist/core/cli/main.js', 'dist/electron/main.js', 'dist/renderer/index.html'];

const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git']);

/** The newest modification time (ms) of the file `path` or of any file under it; 0 when there is none. */
export function newestMtimeMs(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED_FOLDERS.has(entry.name)) continue;
    newest = Math.max(newest, newestMtimeMs(join(path, entry.name)));
  }
  return newest;
}

/** Whether every build output exists and none is older than the newest source. */
export function buildIsCurrent(root = ROOT) {
  const outputs = BUILD_OUTPUTS.map((output) => {
    try {
      return statSync(join(root, output)).mtimeMs;
    } catch {
      return -1;
    }
  });
  if (outputs.some((mtimeMs) => mtimeMs < 0)) return false;
  const newestSource = Math.max(...BUILD_SOURCES.map((source) => newestMtimeMs(join(root, source))));
  return Math.min(...outputs) >= newestSource;
}

/**
 * Runs `npm run build` when the build is not current. Returns null when the
 * build is usable, else why not. A failed rebuild over an older complete build
 * is a warning (`log`), not a stop: a half-edited tree still starts.
 */
export function ensureBuilt(root = ROOT, log = (/** @type {string} */ line) => process.stderr.write(`${line}\n`)) {
  if (buildIsCurrent(root)) return null;
  const hadBuild = BUILD_OUTPUTS.every((output) => existsSync(join(root, output)));
  log(hadBuild ? 'salus: sources changed since the last build: building (npm run build)…' : 'salus: first start: building (npm run build, a minute or two)…');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32' });
  if (result.status === 0) return null;
  if (hadBuild) {
    log('salus: the build failed (see above); starting the previous build.');
    return null;
  }
  return 'the build failed (see above); fix it and run `npm start` again';
}

/**
 * Why Electron cannot open a window for lack of a display, or null. On Linux
 * (and the BSDs) a window needs `$DISPLAY` (X11) or `$WAYLAND_DISPLAY`.
 */
export function displayProblem(env = process.env, platform = process.platform) {
  if (platform === 'win32' || platform === 'darwin') return null;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return null;
  return 'no display ($DISPLAY and $WAYLAND_DISPLAY are unset)';
}

/** The `electron` package's folder, or null when it is not installed. */
export function electronPackageDir(root = ROOT) {
  try {
    return dirname(createRequire(join(root, 'package.json')).resolve('electron/package.json'));
  } catch {
    return null;
  }
}

/**
 * The Electron executable `electron .` would run, when it is on disk, else
 * null. Reads what the `electron` package reads (`path.txt`,
 * `$ELECTRON_OVERRIDE_DIST_PATH`) without requiring it, since requiring it
 * downloads the binary.
 */
export function electronBinary(root = ROOT, env = process.env) {
  const dir = electronPackageDir(root);
  if (!dir) return null;
  let relative = null;
  try {
    relative = readFileSync(join(dir, 'path.txt'), 'utf8').trim();
  } catch {
    // Not downloaded yet.
  }
  const binary = env.ELECTRON_OVERRIDE_DIST_PATH
    ? join(env.ELECTRON_OVERRIDE_DIST_PATH, relative || (process.platform === 'win32' ? 'electron.exe' : 'electron'))
    : relative && join(dir, 'dist', relative);
  return binary && existsSync(binary) ? binary : null;
}

/**
 * Downloads Electron's binary with the package's own installer (Electron
 * fetches it at first launch, not at `npm install`). Skipped under
 * `$ELECTRON_SKIP_BINARY_DOWNLOAD`. Returns the binary, or null.
 */
export function downloadElectron(root = ROOT, env = process.env) {
  const dir = electronPackageDir(root);
  if (!dir || /^(1|true)$/i.test(env.ELECTRON_SKIP_BINARY_DOWNLOAD ?? '')) return null;
  process.stderr.write("salus: downloading Electron's binary (once)…\n");
  const result = spawnSync(process.execPath, [join(dir, 'install.js')], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 10 * 60_000, encoding: 'utf8' });
  const binary = electronBinary(root, env);
  if (!binary) {
    // The installer prints a whole stack; its first line says what went wrong.
    const firstLine = (result.stderr ?? '').split('\n').find((line) => line.trim()) ?? result.error?.message ?? `exit code ${result.status}`;
    process.stderr.write(`salus: could not download Electron: ${firstLine.trim()}\n`);
  }
  return binary;
}

/**
 * Lines Dawn prints on stderr while it looks for a hardware GPU before the
 * service falls back to SwiftShader: `Warning: vkCreateInstance: Found no
 * drivers!` and the like. They are not errors of ours; `npm start` hides them.
 */
export function isDawnNoise(line) {
  return /^Warning: (vk|loader_)/.test(line) || /^\s+at CheckVkSuccessImpl \(/.test(line);
}

/**
 * On Linux, `$XDG_RUNTIME_DIR` (SwiftShader wants a writable one, and the
 * service's socket lives there): when unset, the folder the socket would fall
 * back to anyway (`<tmp>/salus-<user>`), created private. Returns the env to use.
 */
export function withRuntimeDir(env = process.env, platform = process.platform) {
  if (platform === 'win32' || platform === 'darwin' || env.XDG_RUNTIME_DIR) return env;
  const dir = join(tmpdir(), `salus-${userInfo().username.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return { ...env, XDG_RUNTIME_DIR: dir };
}
