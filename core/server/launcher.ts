/**
 * Starts job processes on the service's machine, for the panel's Launch sheet:
 * `node --import <preload> FILE ARGS`, the same process `salus run` starts, with
 * its output captured for the job's detail view. Uploaded job files are kept in
 * the service's jobs folder.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ControlError, type SalusService } from './service.js';
import type { JobHints } from '../protocol/state.js';
import type { JobRecord } from './jobs.js';

/** The module every job process loads first. */
export const PRELOAD_PATH = fileURLToPath(new URL('../client/preload.js', import.meta.url));

/** How long a launched process has to connect before the launch counts as failed. */
const CONNECT_TIMEOUT_MS = 15_000;

export interface LaunchRequest {
  file: string;
  name?: string;
  args?: string[];
  hints?: JobHints;
}

/** Environment for a job process: the socket, its name and hints. */
export function jobEnvironment(socketPath: string, name: string | undefined, hints: JobHints | undefined): NodeJS.ProcessEnv {
  return {
    ...process.env,
    SALUS_SOCKET: socketPath,
    SALUS_JOB_NAME: name ?? '',
    SALUS_JOB_HINTS: JSON.stringify(hints ?? {}),
  };
}

export class JobLauncher {
  constructor(private readonly service: SalusService, private readonly socketPath: string, readonly jobsDir: string) {}

  /** Saves an uploaded job file; returns the path to launch. */
  store(fileName: string, source: string): { file: string } {
    const safe = basename(fileName).replace(/[^A-Za-z0-9._-]/g, '_');
    if (!/\.(m?js)$/.test(safe)) throw new ControlError(`'${fileName}' is not a JavaScript module (.js or .mjs)`);
    mkdirSync(this.jobsDir, { recursive: true, mode: 0o700 });
    const file = join(this.jobsDir, `${Date.now()}-${safe}`);
    writeFileSync(file, source, { mode: 0o600 });
    return { file };
  }

  /** Starts the job; resolves with its id once it has connected, rejects with its output if it dies first. */
  launch(request: LaunchRequest): Promise<{ jobId: string }> {
    const file = resolve(request.file);
    if (!existsSync(file)) return Promise.reject(new ControlError(`job file not found: ${file}`));
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
        reject(new ControlError(`the job did not connect within ${CONNECT_TIMEOUT_MS / 1000} s`));
      }, CONNECT_TIMEOUT_MS);
      const onOpened = (opened: JobRecord) => {
        if (opened.pid !== child.pid) return;
        job = opened;
        cleanup();
        if (early) this.service.appendOutput(opened.id, early);
        resolvePromise({ jobId: opened.id });
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (child.pid) this.service.reportExit(child.pid, code, signal);
        if (job) return;
        cleanup();
        reject(new ControlError(`the job exited (code ${code ?? signal}) before connecting: ${early.trim().slice(-2000)}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.service.off('jobOpened', onOpened);
      };
      this.service.on('jobOpened', onOpened);
      child.on('exit', onExit);
      child.on('error', (error) => { cleanup(); reject(new ControlError(`cannot start the job: ${error.message}`)); });
    });
  }
}
