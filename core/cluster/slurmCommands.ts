/**
 * Running Slurm's own commands (`sbatch`, `squeue`, `scontrol`, `scancel`) for
 * `salus submit`, `salus jobs --cluster` and `salus kill slurm:ID`. Salus
 * grows no cluster manager: Slurm places jobs, these commands ask it, and what
 * they say when they refuse is relayed in their own words.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Thrown when a Slurm command is not on PATH: the message says what to install. */
export class SlurmNotFoundError extends Error {
  constructor(program: string, hint = 'install slurm-client (the Slurm commands) on this machine') {
    super(`salus: Slurm not found (no \`${program}\` on PATH): ${hint}`);
  }
}

/** Thrown when a Slurm command exits non-zero; the message is its own error output. */
export class SlurmCommandError extends Error {
  constructor(readonly program: string, readonly stderr: string, readonly code: number | null) {
    super(`salus: ${program} failed${code === null ? '' : ` (exit code ${code})`}: ${stderr.trim().split('\n').filter(Boolean).slice(-3).join('; ') || 'no message'}`);
  }
}

/** The absolute path of `program` on PATH, or null. */
export function findOnPath(program: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** What a busy or restarting slurmctld answers; a query asked again a second later usually gets through. */
const TRANSIENT = /timed out|Unable to contact slurm controller|Connection refused|Zero Bytes were transmitted|Resource temporarily unavailable/i;

export interface RunSlurmOptions {
  input?: string;
  timeoutMs?: number;
  notFoundHint?: string;
  /** A query that changes nothing: asked again (twice, a second apart) when the controller is busy. */
  query?: boolean;
}

/**
 * Runs a Slurm command to its end and resolves with its stdout. Rejects with
 * SlurmNotFoundError when it is not installed, SlurmCommandError when it fails.
 */
export async function runSlurm(program: string, args: string[], options: RunSlurmOptions = {}): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await runOnce(program, args, options);
    } catch (error) {
      if (!options.query || attempt >= 2 || !(error instanceof SlurmCommandError) || !TRANSIENT.test(error.stderr)) throw error;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

function runOnce(program: string, args: string[], options: RunSlurmOptions): Promise<string> {
  const path = findOnPath(program);
  if (!path) return Promise.reject(new SlurmNotFoundError(program, options.notFoundHint));
  return new Promise((resolveRun, reject) => {
    const child = spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    // A controller that does not answer makes Slurm's commands retry for minutes; say so sooner.
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs ?? 60_000);
    child.on('error', (error) => { clearTimeout(timer); reject(new SlurmCommandError(program, error.message, null)); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolveRun(stdout);
      else reject(new SlurmCommandError(program, signal ? `${stderr}\n(stopped after ${(options.timeoutMs ?? 60_000) / 1000} s: is slurmctld reachable?)` : stderr, code));
    });
    // A command that exits without reading its input (squeue answering at once, an sbatch that fails early)
    // closes the pipe first: that EPIPE is not the outcome, the exit code and stderr above are.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
