/**
 * `salus run FILE`: starts FILE (an ES module) as a job process whose
 * `navigator.gpu` is the service's remote GPU, relays its output, reports its
 * exit to the service, and exits with its code. With `local`, the job runs on a
 * device of its own instead (for comparison; no service needed).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceConnection } from './connection.js';
import { ADAPTERS_ENV } from './adapters/index.js';
import type { JobHints } from '../protocol/state.js';

const PRELOAD = fileURLToPath(new URL('./preload.js', import.meta.url));
const LOCAL_RUNNER = fileURLToPath(new URL('./localRun.js', import.meta.url));

export interface RunOptions {
  file: string;
  args: string[];
  socketPath: string;
  name?: string;
  hints: JobHints;
  local?: boolean;
  /** False: the job's framework adapters stay off (core/client/adapters). */
  adapters?: boolean;
}

/** Runs the job to its end; resolves with the exit code to exit with. */
export async function runJob(options: RunOptions): Promise<number> {
  const file = resolve(options.file);
  if (!existsSync(file)) {
    process.stderr.write(`salus: job file not found: ${file}\n`);
    return 2;
  }
  if (options.local) return spawnAndWait(process.execPath, [...jobNodeFlags(), LOCAL_RUNNER, file, '--', ...options.args], process.env).code;

  // A control connection first: fails fast with a clear message when no service runs,
  // and carries the exit report at the end.
  let control: ServiceConnection;
  try {
    control = await ServiceConnection.open(options.socketPath, { role: 'control' });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
  const env = {
    ...process.env,
    SALUS_SOCKET: options.socketPath,
    SALUS_JOB_NAME: options.name ?? basename(file).replace(/\.[cm]?js$/, ''),
    SALUS_JOB_HINTS: JSON.stringify(options.hints),
    ...(options.adapters === false ? { [ADAPTERS_ENV]: 'off' } : {}),
  };
  // The job's output goes to this terminal and, for the panel's detail view, to the service.
  const relay = createOutputRelay((text) => {
    if (run.pid) void control.call('appendOutput', run.pid, text).catch(() => undefined);
  });
  const run = spawnAndWait(process.execPath, [...jobNodeFlags(), '--import', PRELOAD, file, ...options.args], env, relay.push);
  const { code, signal } = await run.done;
  relay.flush();
  try {
    if (run.pid) await control.call('reportExit', run.pid, code, signal);
  } catch {
    // The service went away; nothing to report to.
  }
  control.close();
  return code;
}

/**
 * Node and V8 flags given to `salus run`'s own node (`node --liftoff-only
 * bin/salus.js run …`) go on to the job: some flags NODE_OPTIONS refuses.
 * Debugger flags stay behind, or the job would fight over the inspector port.
 */
function jobNodeFlags(): string[] {
  return process.execArgv.filter((flag) => !/^--(inspect|debug)/.test(flag));
}

/** Coalesces output into at most one message per 100 ms (or 64 KiB). */
function createOutputRelay(send: (text: string) => void) {
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending) send(pending);
    pending = '';
  };
  const push = (text: string) => {
    pending += text;
    if (pending.length >= 64 * 1024) flush();
    else timer ??= setTimeout(flush, 100);
  };
  return { push, flush };
}

/**
 * Writes to `stream` (our stdout or stderr) until its reader goes away: then, as a pipe into `head`
 * closes, the rest is dropped quietly rather than crashing the launcher while its job still runs
 * (the service keeps the job's output either way).
 */
function relayTo(stream: NodeJS.WriteStream): (chunk: Buffer) => void {
  let open = true;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    open = false;
  });
  return (chunk) => {
    if (open) stream.write(chunk);
  };
}

function spawnAndWait(command: string, args: string[], env: NodeJS.ProcessEnv, onOutput?: (text: string) => void) {
  const child = spawn(command, args, { env, stdio: onOutput ? ['inherit', 'pipe', 'pipe'] : 'inherit' });
  if (onOutput) {
    const [toStdout, toStderr] = [relayTo(process.stdout), relayTo(process.stderr)];
    child.stdout?.on('data', (chunk: Buffer) => { toStdout(chunk); onOutput(chunk.toString('utf8')); });
    child.stderr?.on('data', (chunk: Buffer) => { toStderr(chunk); onOutput(chunk.toString('utf8')); });
  }
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const done = new Promise<{ code: number; signal: string | null }>((resolvePromise) => {
    child.on('close', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolvePromise({ code: code ?? 128 + (signal === 'SIGKILL' ? 9 : 15), signal });
    });
    child.on('error', (error) => {
      process.stderr.write(`salus: cannot start node: ${error.message}\n`);
      resolvePromise({ code: 1, signal: null });
    });
  });
  return { pid: child.pid, done, get code() { return done.then((r) => r.code); } };
}
