/**
 * Starts job processes on the service's machine, for the panel's Launch sheet:
 * `node --import <preload> FILE ARGS`, the same process `salus run` starts, with
 * its output captured for the job's detail view. Uploaded job files are kept in
 * the service's jobs folder.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync, realpathSync, rmSync } from 'node:fs';
import { basename, join, relative, resolve, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ControlError, type JobIdentified, type SalusService } from './service.js';
import type { JobHints } from '../protocol/state.js';
import type { LaunchRequest } from '../protocol/calls.js';
import type { JobRecord } from './jobRecord.js';

/** The module every job process loads first. */
export const PRELOAD_PATH = fileURLToPath(new URL('../client/preload.js', import.meta.url));

/** How long a launched process has to connect before the launch counts as failed. */
const CONNECT_TIMEOUT_MS = 15_000;

/** The example jobs shipped with Salus (assets/jobs beside dist/), which the panel offers. */
export const EXAMPLE_JOBS_DIR = fileURLToPath(new URL('../../../assets/jobs/', import.meta.url));

/**
 * Environment for a job process: the service's own, less its secrets (the web
 * panel's token), plus the socket, the job's name and hints.
 */
export function jobEnvironment(socketPath: string, name: string | undefined, hints: JobHints | undefined): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  delete inherited.SALUS_TOKEN;
  return {
    ...inherited,
    SALUS_SOCKET: socketPath,
    SALUS_JOB_NAME: name ?? '',
    SALUS_JOB_HINTS: JSON.stringify(hints ?? {}),
  };
}

/** Whether `file` lies inside `dir` (both already resolved). */
function isInside(dir: string, file: string): boolean {
  const path = relative(dir, file);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
}

/** Who asked for a launch: the user's own socket may name any file; the web panel only its jobs and the examples. */
export type LaunchCaller = 'local' | 'web';

/** Told of every launch, so that a job history keeps requests whose jobs have not started (core/history). */
export interface LaunchObserver {
  /** A launch of the checked `request.file` begins; the ticket hears how it went. */
  requested(request: LaunchRequest, caller: LaunchCaller): { connected(jobId: string): void; failed(): void };
}

export class JobLauncher {
  /** Files saved by `store`, removed when the job launched from them ends. */
  private readonly uploads = new Set<string>();
  /** Hears of every launch; null when nothing keeps them. */
  observer: LaunchObserver | null = null;

  constructor(private readonly service: SalusService, private readonly socketPath: string, readonly jobsDir: string) {}

  /**
   * The real path of the job file to start. From the web panel only `.js`/`.mjs`
   * files inside the jobs folder or the shipped examples may run (a page cannot
   * make the service run an arbitrary program); every caller gets a clear error
   * for a missing file.
   */
  private checkFile(requested: string, caller: LaunchCaller): string {
    const file = resolve(requested);
    if (!existsSync(file)) throw new ControlError(`job file not found: ${file}`);
    const real = realpathSync(file);
    if (caller === 'local') return real;
    const roots = [this.jobsDir, EXAMPLE_JOBS_DIR].filter(existsSync).map((dir) => realpathSync(dir));
    if (!/\.m?js$/.test(real) || !roots.some((root) => isInside(root, real))) {
      throw new ControlError(`the web panel may launch only .js or .mjs files that it uploaded or that ship as examples (${EXAMPLE_JOBS_DIR}); run other files with \`salus run FILE\``);
    }
    return real;
  }

  /** Saves an uploaded job file; returns the path to launch. */
  store(fileName: string, source: string): { file: string } {
    const safe = basename(fileName).replace(/[^A-Za-z0-9._-]/g, '_');
    if (!/\.(m?js)$/.test(safe)) throw new ControlError(`'${fileName}' is not a JavaScript module (.js or .mjs)`);
    mkdirSync(this.jobsDir, { recursive: true, mode: 0o700 });
    const file = join(this.jobsDir, `${Date.now()}-${safe}`);
    writeFileSync(file, source, { mode: 0o600 });
    this.uploads.add(realpathSync(file));
    return { file };
  }

  /**
   * Starts again a launch that an earlier run of the service never started (core/history).
   * A file it uploaded to the jobs folder is removed when this job ends, as the first would have been.
   */
  relaunch(request: LaunchRequest, caller: LaunchCaller): Promise<{ jobId: string }> {
    const file = resolve(request.file);
    if (existsSync(file) && existsSync(this.jobsDir) && isInside(realpathSync(this.jobsDir), realpathSync(file))) this.uploads.add(realpathSync(file));
    return this.launch(request, caller);
  }

  /** Starts the job; resolves with its id once it has connected, rejects with its output if it dies first. */
  launch(request: LaunchRequest, caller: LaunchCaller = 'local'): Promise<{ jobId: string }> {
    let file: string;
    try {
      file = this.checkFile(request.file, caller);
    } catch (error) {
      return Promise.reject(error);
    }
    const ticket = this.observer?.requested({ ...request, file }, caller);
    const child = spawn(process.execPath, ['--import', PRELOAD_PATH, file, ...(request.args ?? [])], {
      env: jobEnvironment(this.socketPath, request.name ?? basename(file).replace(/\.m?js$/, ''), request.hints),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let early = '';
    let job: JobRecord | undefined;
    const capture = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (job) this.service.appendOutput(job.id, text);
      else early += text;
    };
    child.stdout.on('data', capture);
    child.stderr.on('data', capture);
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        child.kill('SIGTERM');
        ticket?.failed();
        reject(new ControlError(`the job did not connect within ${CONNECT_TIMEOUT_MS / 1000} s`));
      }, CONNECT_TIMEOUT_MS);
      // Matched once the OS has said who holds the job's socket (core/server/socketServer.ts): the pid a hello claims is the
      // child's only when the OS agrees, so a process naming the child's pid cannot take its place. Where the OS
      // cannot say, the claim alone.
      const onIdentified = ({ job: opened, peer }: JobIdentified) => {
        if (opened.pid !== child.pid || (peer !== null && !peer.pids.includes(child.pid))) return;
        job = opened;
        ticket?.connected(opened.id);
        cleanup();
        if (early) this.service.appendOutput(opened.id, early);
        resolvePromise({ jobId: opened.id });
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (child.pid) this.service.reportExit(child.pid, code, signal);
        if (this.uploads.delete(file)) rmSync(file, { force: true });
        if (job) return;
        cleanup();
        ticket?.failed();
        reject(new ControlError(`the job exited (code ${code ?? signal}) before connecting: ${early.trim().slice(-2000)}`));
      };
      let stopListening = () => {};
      const cleanup = () => {
        clearTimeout(timer);
        stopListening();
      };
      stopListening = this.service.onDidIdentifyJob(onIdentified);
      child.on('exit', onExit);
      child.on('error', (error) => { cleanup(); ticket?.failed(); reject(new ControlError(`cannot start the job: ${error.message}`)); });
    });
  }
}
