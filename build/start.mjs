#!/usr/bin/env node
// @ts-check
/**
 * `npm start`: builds what is out of date, then opens the desktop app. Where
 * Electron cannot open a window — no display, or no Electron binary and none
 * can be downloaded — it runs the same service and serves the same panel on
 * 127.0.0.1 instead, printing why and the panel's address with its token.
 *
 * Options (after `npm start --`): `--headless` never opens a window;
 * `--no-build` uses dist/ as it is; `--http [HOST:]PORT` where the headless
 * panel listens (default: the settings file's `http`, else 127.0.0.1 on a free port).
 */
import { spawn } from 'node:child_process';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { displayProblem, downloadElectron, electronBinary, ensureBuilt, isDawnNoise, ROOT, withRuntimeDir } from './startSupport.mjs';

const { values: options } = parseArgs({
  options: { headless: { type: 'boolean' }, 'no-build': { type: 'boolean' }, http: { type: 'string' } },
});
const env = withRuntimeDir(process.env);

if (!options['no-build']) {
  const problem = ensureBuilt(ROOT);
  if (problem) {
    process.stderr.write(`salus: cannot start: ${problem}\n`);
    process.exit(1);
  }
}

const noWindow = options.headless ? 'started with --headless' : displayProblem(env) ?? electronProblem();
if (noWindow) await serveHeadless(noWindow);
else openWindow(/** @type {string} */ (electronBinary(ROOT, env)));

/** Why Electron's binary cannot run (after trying to download it), or null. */
function electronProblem() {
  if (electronBinary(ROOT, env) || downloadElectron(ROOT, env)) return null;
  return /^(1|true)$/i.test(env.ELECTRON_SKIP_BINARY_DOWNLOAD ?? '')
    ? "Electron's binary is not installed ($ELECTRON_SKIP_BINARY_DOWNLOAD is set)"
    : "Electron's binary is not installed and could not be downloaded";
}

/** Runs the desktop app; exits with its code. */
function openWindow(binary) {
  const child = spawn(binary, ['.'], { cwd: ROOT, env, stdio: 'inherit' });
  forwardSignals(child);
  let failed = false;
  child.once('error', (error) => {
    failed = true;
    void serveHeadless(`Electron could not start (${error.message})`);
  });
  // 'exit' may follow 'error' too; the headless panel then keeps running.
  child.once('exit', (code, signal) => { if (!failed) process.exit(code ?? (signal ? 1 : 0)); });
}

/** `salus serve --http` on the desktop app's socket, with Dawn's noise hidden; exits with its code. */
async function serveHeadless(reason) {
  const { desktopSocketPath } = await import(pathToFileURL(join(ROOT, 'dist', 'core', 'platform', 'socketPath.js')).href);
  const socketPath = desktopSocketPath({ platform: process.platform, env, tmpdir: tmpdir(), user: userInfo().username });
  const { SettingsStore } = await import(pathToFileURL(join(ROOT, 'dist', 'core', 'platform', 'settingsFile.js')).href);
  // The settings file's address when it has one (salus serve reads it), else a free port on loopback.
  const http = options.http ?? (SettingsStore.load().get().service.http ? null : '127.0.0.1:0');
  process.stdout.write(`salus: not opening a window: ${reason}. Serving the panel instead: open the address below in a browser.\n`);
  const args = [join(ROOT, 'bin', 'salus.js'), 'serve', '--socket', socketPath, ...(http ? ['--http', http] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  forwardSignals(child);
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  child.once('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1)));
}

/** Copies lines from `input` to `output`, less Dawn's GPU-probing warnings. */
function relay(input, output) {
  let afterNoise = false;
  createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
    // Dawn ends each warning with an empty line.
    const noise = isDawnNoise(line) || (afterNoise && line === '');
    afterNoise = noise;
    if (!noise) output.write(`${line}\n`);
  });
}

function forwardSignals(child) {
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.on(signal, () => child.kill(signal));
  }
}
