/**
 * Starts `salus serve` in a real Node process and keeps it running.
 *
 * Not in Electron's own Node: the `webgpu` package cannot read GPU results
 * back inside Electron's V8 memory cage (DESIGN.md decision 6;
 * https://github.com/dawn-gpu/node-webgpu/issues/5), so the service gets a
 * plain Node — the one bundled with the app, `$SALUS_NODE`, or `node` on PATH.
 * The service is ready when it prints `salus: listening on PATH`. When it dies
 * it is started again after a backoff that doubles with each failure in a row
 * (a run of `stableAfterMs` resets the streak), except when it exits with
 * EXIT_NO_GPU: then it stays stopped, its status saying what to install. Every
 * change is a `status` event carrying a `ServiceStatus`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ServiceStatus } from './desktopApi.js';
import { EXIT_NO_GPU } from '../core/protocol/exitCodes.js';

/** The app's own socket: where clients find it when no headless service runs (core/platform/socketPath.ts). */
export { desktopSocketPath } from '../core/platform/socketPath.js';

/** What `salus serve` prints once its socket accepts connections. */
const LISTENING = /^salus: listening on (.+)$/;
/** Lines of the service's output kept to explain a crash. */
const TAIL_LINES = 20;

export interface SupervisorOptions {
  /** The Node binary that runs the service (see `resolveNodeBinary`). */
  nodePath: string;
  /** Node's arguments, read at every (re)start so changed settings apply (see `serviceArguments`). */
  args: () => string[];
  /** The socket the service is told to listen on. */
  socketPath: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** First restart delay; doubles per failure in a row. Default 500 ms. */
  initialBackoffMs?: number;
  /** Longest restart delay. Default 30 s. */
  maxBackoffMs?: number;
  /** A run at least this long ends a failure streak. Default 30 s. */
  stableAfterMs?: number;
  /** A start that does not reach `listening` within this is killed and counts as a failure. Default 60 s. */
  readyTimeoutMs?: number;
  /** After SIGTERM, how long `stop` waits before SIGKILL. Default 5 s. */
  stopTimeoutMs?: number;
}

/** Where to find the Node binary for the service, and in what environment. */
export interface NodeBinaryContext {
  isPackaged: boolean;
  /** `process.resourcesPath` of the packaged app. */
  resourcesPath: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

/**
 * `$SALUS_NODE` when set (a user's own Node wins), else the Node bundled in the
 * packaged app's resources (`node/bin/node[.exe]`, put there by
 * build/fetch-node.mjs), else `node` on PATH.
 */
export function resolveNodeBinary(context: NodeBinaryContext): string {
  if (context.env.SALUS_NODE) return context.env.SALUS_NODE;
  if (context.isPackaged) return join(context.resourcesPath, 'node', 'bin', context.platform === 'win32' ? 'node.exe' : 'node');
  return 'node';
}

/**
 * The `salus` CLI script for the app at `appPath` (`app.getAppPath()`). Inside a
 * package that is `app.asar`, which plain Node cannot read, so the service's
 * files are unpacked (build/electron-builder.yml `asarUnpack`) beside it.
 */
export function serviceCliPath(appPath: string): string {
  return join(appPath.replace(/app\.asar$/, 'app.asar.unpacked'), 'bin', 'salus.js');
}

/**
 * `salus serve`'s argv (after the Node binary). The policy, its knobs and the
 * memory come from the settings file the app and the service share
 * (core/platform/settingsFile.ts), so they are not flags here; the log also
 * goes to `logFile`, rotated.
 */
export function serviceArguments(options: { cliPath: string; socketPath: string; logFile?: string }): string[] {
  const args = [options.cliPath, 'serve', '--socket', options.socketPath];
  if (options.logFile) args.push('--log-file', options.logFile);
  return args;
}

/** The environment for the service: ours, less what would make a Node binary behave like Electron. */
export function serviceEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.ELECTRON_RUN_AS_NODE;
  delete copy.ELECTRON_NO_ASAR;
  return copy;
}

/** Events: `status` (ServiceStatus), `output` (line: string, stream: 'stdout' | 'stderr'). */
export class ServiceSupervisor extends EventEmitter {
  private child: ChildProcess | null = null;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private readyTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private tail: string[] = [];
  private current: ServiceStatus;

  constructor(private readonly options: SupervisorOptions) {
    super();
    this.current = {
      state: 'stopped', pid: null, socketPath: options.socketPath, restarts: 0, consecutiveFailures: 0,
      restartInMs: null, message: 'the Salus service has not been started',
    };
  }

  /** The status now. */
  get status(): ServiceStatus {
    return { ...this.current };
  }

  /** Starts the service (no-op while it runs or a restart is pending). */
  start(): void {
    if (this.child || this.restartTimer) return;
    this.stopping = false;
    this.spawnService();
  }

  /** Stops the service for good (SIGTERM, then SIGKILL after `stopTimeoutMs`); resolves once it has exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child) {
      if (this.current.state !== 'stopped') this.update({ state: 'stopped', pid: null, restartInMs: null, message: 'the Salus service was stopped' });
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const killTimer = setTimeout(() => child.kill('SIGKILL'), this.options.stopTimeoutMs ?? 5_000);
    await exited;
    clearTimeout(killTimer);
  }

  private spawnService(): void {
    const { nodePath } = this.options;
    this.tail = [];
    this.startedAt = Date.now();
    const child = spawn(nodePath, this.options.args(), {
      cwd: this.options.cwd,
      env: serviceEnvironment(this.options.env ?? process.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child = child;
    child.once('error', (error) => this.onEnded(child, null, null, error));
    child.once('exit', (code, signal) => this.onEnded(child, code, signal, null));
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: child[stream]!, crlfDelay: Infinity }).on('line', (line) => this.onLine(child, line, stream));
    }
    const readyTimeoutMs = this.options.readyTimeoutMs ?? 60_000;
    this.readyTimer = setTimeout(() => {
      this.tail.push(`salus serve did not start listening within ${readyTimeoutMs} ms`);
      child.kill('SIGKILL');
    }, readyTimeoutMs);
    this.update({ state: 'starting', pid: child.pid ?? null, restartInMs: null, message: `starting the Salus service (${nodePath})` });
  }

  private onLine(child: ChildProcess, line: string, stream: 'stdout' | 'stderr'): void {
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.emit('output', line, stream);
    const listening = stream === 'stdout' ? LISTENING.exec(line) : null;
    if (listening && child === this.child && this.current.state === 'starting') {
      if (this.readyTimer) clearTimeout(this.readyTimer);
      this.readyTimer = null;
      this.update({ state: 'running', message: `the Salus service is listening on ${listening[1]}` });
    }
  }

  private onEnded(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, error: Error | null): void {
    // 'error' and 'exit' may both fire for one child; the first one counts.
    if (child !== this.child) return;
    this.child = null;
    if (this.readyTimer) clearTimeout(this.readyTimer);
    this.readyTimer = null;
    if (this.stopping) {
      this.update({ state: 'stopped', pid: null, restartInMs: null, message: 'the Salus service was stopped' });
      return;
    }
    if (code === EXIT_NO_GPU) {
      // Restarting cannot help. The service's last message (from its last `salus:` line on; Dawn's
      // Vulkan warnings come before it) says what to install.
      const from = this.tail.findLastIndex((line) => line.startsWith('salus:'));
      const words = this.tail.slice(Math.max(0, from)).map((line) => line.trim()).filter(Boolean).join(' ');
      this.update({ state: 'stopped', pid: null, restartInMs: null, message: `the Salus service found no GPU: ${words}` });
      return;
    }
    const ranMs = Date.now() - this.startedAt;
    const streak = ranMs >= (this.options.stableAfterMs ?? 30_000) ? 1 : this.current.consecutiveFailures + 1;
    const initial = this.options.initialBackoffMs ?? 500;
    const delay = Math.min(this.options.maxBackoffMs ?? 30_000, initial * 2 ** (streak - 1));
    const how = error
      ? `could not start ${this.options.nodePath}: ${error.message}`
      : `stopped unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})`;
    const lastWords = this.tail.filter((line) => line.trim()).at(-1);
    this.update({
      state: 'restarting', pid: null, consecutiveFailures: streak, restartInMs: delay,
      message: `the Salus service ${how}${lastWords ? `: ${lastWords}` : ''}; restarting in ${formatDelay(delay)}`,
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.current.restarts += 1;
      this.spawnService();
    }, delay);
  }

  private update(change: Partial<ServiceStatus>): void {
    this.current = { ...this.current, ...change };
    this.emit('status', this.status);
  }
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}
