/**
 * Test harness: a real `salus serve` child process on a private socket, the
 * `salus` CLI against it, and job processes through `salus run`. Needs `npm run
 * build` first (the tests spawn dist/, as users do).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { ServiceConnection } from '../../core/client/connection.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const SALUS_BIN = join(ROOT, 'bin', 'salus.js');

/** Fails fast with a clear message when the build is missing. */
export function requireBuild(): void {
  if (!existsSync(join(ROOT, 'dist', 'core', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` before the integration tests (npm test does).');
  }
}

/** The last JSON line a job printed (jobs print their results as JSON lines). */
export function lastJson(stdout: string): any {
  const lines = stdout.trim().split('\n').filter((line) => line.startsWith('{'));
  if (lines.length === 0) throw new Error(`no JSON line in the job's output:\n${stdout.slice(-2000)}`);
  return JSON.parse(lines[lines.length - 1]);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface TestService {
  socketPath: string;
  dir: string;
  process: ChildProcess;
  /** Everything the service printed so far. */
  log(): string;
  /** Runs `salus ARGS` against this service. */
  cli(args: string[], options?: { timeoutMs?: number }): Promise<RunResult>;
  /** `salus ARGS --json`, parsed. */
  json<T>(args: string[]): Promise<T>;
  /** Starts `salus run FILE …` without waiting; `nodeFlags` go to its node (and on to the job's). */
  startJob(args: string[], env?: NodeJS.ProcessEnv, nodeFlags?: string[]): JobProcess;
  /** A control connection (closed by stop()). */
  control(): Promise<ServiceConnection>;
  /** Waits until `predicate` holds for `salus jobs --json`. */
  waitForJobs<T>(predicate: (jobs: any[]) => T | false | undefined | null, timeoutMs?: number): Promise<T>;
  /**
   * Stops the service (SIGTERM, or `signal`) and removes its folder, unless `keepDir`: then
   * `startService(args, env, { dir })` starts it again on the same socket and data folder.
   */
  stop(options?: { keepDir?: boolean; signal?: NodeJS.Signals }): Promise<void>;
}

export interface JobProcess {
  child: ChildProcess;
  done: Promise<RunResult>;
  stdout(): string;
}

function collect(child: ChildProcess): { done: Promise<RunResult>; out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const done = new Promise<RunResult>((resolvePromise) => {
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
  return { done, out: () => stdout, err: () => stderr };
}

/**
 * Starts a service with `args` (e.g. ['--memory', '64MiB', '--policy', 'SRTF']), its job history in
 * `<dir>/data` unless `args` give a `--data-dir`; `options.dir` reuses a stopped service's folder.
 */
export async function startService(args: string[] = [], env: NodeJS.ProcessEnv = {}, options: { dir?: string } = {}): Promise<TestService> {
  requireBuild();
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'salus-test-'));
  const runtime = join(dir, 'run');
  mkdirSync(runtime, { mode: 0o700, recursive: true });
  const dataArgs = args.includes('--data-dir') ? [] : ['--data-dir', join(dir, 'data')];
  const socketPath = join(runtime, 'salus.sock');
  const baseEnv = { ...process.env, XDG_RUNTIME_DIR: runtime, SALUS_SOCKET: socketPath, ...env };
  const child = spawn(process.execPath, [SALUS_BIN, 'serve', '--jobs-dir', join(dir, 'jobs'), ...dataArgs, ...args], { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const connections: ServiceConnection[] = [];
  await new Promise<void>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`salus serve did not start:\n${output.out()}\n${output.err()}`)), 20_000);
    const check = () => {
      if (output.out().includes('salus: listening on')) {
        clearTimeout(timer);
        resolvePromise();
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`salus serve exited (${code}):\n${output.out()}\n${output.err()}`)); });
  });

  const cli = (cliArgs: string[], options: { timeoutMs?: number } = {}) => {
    const c = spawn(process.execPath, [SALUS_BIN, ...cliArgs], { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => c.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    const result = collect(c);
    return result.done.finally(() => clearTimeout(timer));
  };

  const service: TestService = {
    socketPath,
    dir,
    process: child,
    log: () => output.out() + output.err(),
    cli,
    async json<T>(cliArgs: string[]) {
      const result = await cli([...cliArgs, '--json']);
      if (result.code !== 0) throw new Error(`salus ${cliArgs.join(' ')} failed (${result.code}): ${result.stderr}`);
      return JSON.parse(result.stdout) as T;
    },
    startJob(jobArgs, jobEnv = {}, nodeFlags = []) {
      const c = spawn(process.execPath, [...nodeFlags, SALUS_BIN, 'run', ...jobArgs], { env: { ...baseEnv, ...jobEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      const result = collect(c);
      return { child: c, done: result.done, stdout: result.out };
    },
    async control() {
      const connection = await ServiceConnection.open(socketPath, { role: 'control' });
      connections.push(connection);
      return connection;
    },
    async waitForJobs(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last: unknown[] = [];
      while (Date.now() < deadline) {
        const connection = await service.control();
        last = await connection.call<any[]>('jobs');
        connection.close();
        const value = predicate(last as any[]);
        if (value) return value;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for jobs; last: ${JSON.stringify(last, null, 1).slice(0, 3000)}`);
    },
    async stop(stopOptions = {}) {
      for (const connection of connections) connection.close();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(stopOptions.signal ?? 'SIGTERM');
        await output.done;
      }
      if (!stopOptions.keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return service;
}

/**
 * `startService` for a file whose tests each start their own service: every
 * service it started stops after each test, passed or failed, newest first (a
 * service restarted on a stopped one's folder stops before that folder goes).
 * Call it once at the top of the file: it registers the file's afterEach.
 */
export function startServicePerTest(): typeof startService {
  const started: TestService[] = [];
  afterEach(async () => {
    for (const service of started.splice(0).reverse()) await service.stop();
  });
  return async (...args) => {
    const service = await startService(...args);
    started.push(service);
    return service;
  };
}

/**
 * One service for all the tests of a file, started with `args` and `env` before
 * the first and stopped after the last. Its members reach the running service,
 * so use them inside tests and hooks, not at the file's top level.
 */
export function serviceForAllTests(args: string[] = [], env: NodeJS.ProcessEnv = {}): TestService {
  let started: TestService | null = null;
  beforeAll(async () => {
    started = await startService(args, env);
  });
  afterAll(async () => {
    await started?.stop();
  });
  const current = (): TestService => {
    if (!started) throw new Error('the service starts in beforeAll: use it inside a test or a hook');
    return started;
  };
  return {
    get socketPath() { return current().socketPath; },
    get dir() { return current().dir; },
    get process() { return current().process; },
    log: () => current().log(),
    cli: (cliArgs, options) => current().cli(cliArgs, options),
    json: (cliArgs) => current().json(cliArgs),
    startJob: (jobArgs, jobEnv, nodeFlags) => current().startJob(jobArgs, jobEnv, nodeFlags),
    control: () => current().control(),
    waitForJobs: (predicate, timeoutMs) => current().waitForJobs(predicate, timeoutMs),
    stop: (options) => current().stop(options),
  };
}
