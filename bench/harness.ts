/**
 * What every benchmark needs: a real `salus serve` on a private socket, `salus
 * …` child processes whose stdout lines come back parsed and timestamped, and
 * the clock every job uses (epoch ms, comparable across processes). Runs the
 * compiled CLI in dist/, as users do.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { ServiceConnection } from '../core/client/connection.js';
import type { GpuInfo, ServiceSnapshot } from '../core/protocol/state.js';

/** The repository root: the nearest folder above this file with `bin/salus.js`. */
export const ROOT = findRoot(import.meta.dirname);
export const SALUS_BIN = join(ROOT, 'bin', 'salus.js');
/** Where the bench job scripts live (they are not compiled, so always the source folder). */
export const JOBS_DIR = join(ROOT, 'bench', 'jobs');

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'bin', 'salus.js')) && existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`bench: no bin/salus.js above ${from}`);
  }
}

/** Epoch milliseconds with sub-millisecond resolution; the job scripts use the same clock. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** One stdout line of a child process, as JSON when it parses. */
export interface OutputLine {
  /** When this process read it (epoch ms). */
  receivedAt: number;
  text: string;
  json: Record<string, any> | null;
}

/** A finished `salus …` process. */
export interface SalusRun {
  code: number | null;
  /** Epoch ms just before the process was spawned. */
  spawnedAt: number;
  lines: OutputLine[];
  stderr: string;
  /** For a failed job through a service: what the service printed until then. */
  serviceLog?: string;
  /** The parsed JSON lines whose `ev` is `event`. */
  events(event: string): Record<string, any>[];
}

/** A running `salus …` process. */
export interface SalusProcess {
  pid: number | undefined;
  /** Its stdout lines so far (the same array `done` gives at the end). */
  lines: readonly OutputLine[];
  done: Promise<SalusRun>;
  /** Whether it has exited. */
  exited(): boolean;
  /** Signals it (`salus run` passes SIGTERM and SIGINT on to its job); false if it already exited. */
  kill(signal?: NodeJS.Signals): boolean;
}

/** A job script: under bench/jobs unless the path is absolute. */
function jobPath(file: string): string {
  return isAbsolute(file) ? file : join(JOBS_DIR, file);
}

/** Environment for every child: a private runtime dir (SwiftShader warns without one). */
function childEnv(runtimeDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, XDG_RUNTIME_DIR: runtimeDir, ...extra };
}

/**
 * Starts `salus ARGS` with ROOT as working directory. Fails the returned promise
 * only if the process cannot be spawned; a non-zero exit is the caller's to judge
 * (see `expectSuccess`).
 */
export function startSalus(args: readonly string[], env: NodeJS.ProcessEnv, nodeFlags: readonly string[] = []): SalusProcess {
  return startNode(SALUS_BIN, args, env, nodeFlags);
}

/** Starts `node SCRIPT ARGS` (any script, not only `salus`) as `startSalus` does, its stdout lines parsed alike. */
export function startNode(script: string, args: readonly string[], env: NodeJS.ProcessEnv, nodeFlags: readonly string[] = []): SalusProcess {
  const spawnedAt = nowMs();
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: OutputLine[] = [];
  let partial = '';
  let stderr = '';
  let exited = false;
  child.stdout.on('data', (chunk: Buffer) => {
    const receivedAt = nowMs();
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) lines.push({ receivedAt, text, json: parseJson(text) });
  });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const done = new Promise<SalusRun>((resolve, reject) => {
    child.on('error', (error) => {
      exited = true;
      reject(error);
    });
    child.on('close', (code) => {
      exited = true;
      if (partial) lines.push({ receivedAt: nowMs(), text: partial, json: parseJson(partial) });
      resolve({
        code, spawnedAt, lines, stderr,
        events: (event) => lines.flatMap((line) => (line.json?.ev === event ? [line.json] : [])),
      });
    });
  });
  return {
    pid: child.pid, lines, done,
    exited: () => exited,
    kill: (signal = 'SIGTERM') => !exited && child.kill(signal),
  };
}

function parseJson(text: string): Record<string, any> | null {
  if (!text.startsWith('{')) return null;
  try {
    return JSON.parse(text) as Record<string, any>;
  } catch {
    return null;
  }
}

/** Throws with the process's output when it did not exit 0. */
export function expectSuccess(run: SalusRun, what: string): SalusRun {
  if (run.code !== 0) {
    const stdout = run.lines.map((l) => l.text).join('\n');
    throw new Error(`bench: ${what} exited with ${run.code}\n--- stdout\n${stdout.slice(-2000)}\n--- stderr\n${run.stderr.slice(-2000)}`
      + (run.serviceLog === undefined ? '' : `\n--- salus serve\n${run.serviceLog.slice(-3000)}`));
  }
  return run;
}

/** A `salus serve` of this bench, on a private socket. */
export interface BenchService {
  socketPath: string;
  /** The `salus serve` process, e.g. to read its resources from /proc. */
  pid: number | undefined;
  /**
   * `salus run [SALUS_ARGS] FILE -- JOB_ARGS` against this service; FILE is under bench/jobs unless absolute.
   * `nodeFlags` go to the node of `salus run`, which passes them on to the job's (e.g. `--liftoff-only`).
   */
  run(file: string, jobArgs?: readonly string[], salusArgs?: readonly string[], nodeFlags?: readonly string[]): SalusProcess;
  /** `salus run --local FILE -- JOB_ARGS`: the same job on a device of its own (no service involved). */
  runLocal(file: string, jobArgs?: readonly string[], nodeFlags?: readonly string[]): SalusProcess;
  /** Everything the service printed so far. */
  log(): string;
  /** A control call (`jobs`, `policy`, `setPolicyParams`, `snapshot`, …). */
  call<T>(method: string, ...params: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

/** Starts `salus serve ARGS` and waits until it listens. */
export async function startService(serveArgs: readonly string[] = []): Promise<BenchService> {
  const dir = mkdtempSync(join(tmpdir(), 'salus-bench-'));
  const runtimeDir = join(dir, 'run');
  mkdirSync(runtimeDir, { mode: 0o700 });
  const socketPath = join(runtimeDir, 'salus.sock');
  const env = childEnv(runtimeDir, { SALUS_SOCKET: socketPath });
  const child = spawn(process.execPath, [SALUS_BIN, 'serve', '--socket', socketPath, '--jobs-dir', join(dir, 'jobs'), '--data-dir', join(dir, 'data'), ...serveArgs], {
    cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench: salus serve did not start in 30 s:\n${output}`)), 30_000);
    child.stdout.on('data', () => {
      if (output.includes('salus: listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`bench: salus serve exited (${code}):\n${output}`));
    });
  });

  return {
    socketPath,
    pid: child.pid,
    run: (file, jobArgs = [], salusArgs = [], nodeFlags = []) => {
      const job = startSalus(['run', '--socket', socketPath, ...salusArgs, jobPath(file), '--', ...jobArgs], env, nodeFlags);
      // A failed job may be the service's fault: keep its log with the failure.
      return { ...job, done: job.done.then((run) => (run.code === 0 ? run : { ...run, serviceLog: output })) };
    },
    runLocal: (file, jobArgs = [], nodeFlags = []) => startSalus(['run', '--local', jobPath(file), '--', ...jobArgs], env, nodeFlags),
    log: () => output,
    async call<T>(method: string, ...params: unknown[]): Promise<T> {
      const connection = await ServiceConnection.open(socketPath, { role: 'control' });
      try {
        return await connection.call<T>(method, ...params);
      } finally {
        connection.close();
      }
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The adapter a fresh `salus serve` opens on this machine (it is started and stopped for the question). */
export async function serviceGpu(): Promise<GpuInfo> {
  const service = await startService();
  try {
    return (await service.call<ServiceSnapshot>('snapshot')).gpu;
  } finally {
    await service.stop();
  }
}

/**
 * The machine's CPU time in use (user, nice, system, irq; all cores, every process) since boot, in ms.
 * Two readings around a run give the cores it kept busy on average: a software GPU computes on these
 * same cores, so a run that keeps them all busy cannot go faster by running more at once.
 */
export function machineCpuBusyMs(): number {
  let busyMs = 0;
  for (const { times } of cpus()) busyMs += times.user + times.nice + times.sys + times.irq;
  return busyMs;
}

/** Readings of machineCpuBusyMs over time: `at` is epoch ms (as the jobs' `t` stamps), `busyMs` the reading. */
export interface CpuReading {
  at: number;
  busyMs: number;
}

/** Reads the machine's CPU time every `everyMs` until stopped (the first and last readings are taken at start and stop). */
export function startCpuSampler(everyMs = 100): { stop(): CpuReading[] } {
  const readings: CpuReading[] = [];
  const read = () => readings.push({ at: performance.timeOrigin + performance.now(), busyMs: machineCpuBusyMs() });
  read();
  const timer = setInterval(read, everyMs);
  return {
    stop() {
      clearInterval(timer);
      read();
      return readings;
    },
  };
}

/** CPU ms the machine spent between epoch times t0 and t1 (readings interpolated linearly; null outside them). */
export function cpuBusyBetween(readings: readonly CpuReading[], t0: number, t1: number): number | null {
  const at = (t: number): number | null => {
    for (let i = 1; i < readings.length; i++) {
      const [a, b] = [readings[i - 1], readings[i]];
      if (t >= a.at && t <= b.at) return b.at === a.at ? a.busyMs : a.busyMs + ((b.busyMs - a.busyMs) * (t - a.at)) / (b.at - a.at);
    }
    return null;
  };
  const [start, end] = [at(t0), at(t1)];
  return start === null || end === null ? null : end - start;
}

/** What every benchmark's figures depend on besides the GPU: the CPUs, memory, Node, load and commit. */
export function machineFacts() {
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout.
  }
  return {
    cpuCount: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage1m: Number(loadavg()[0].toFixed(2)),
    commit,
  };
}
