/**
 * Loaded with `node --import` before a job's own module (by `salus run` and by
 * the service's launcher): connects to the service, says hello with the job's
 * name and hints, and installs the remote GPU as `navigator.gpu` and the SDK as
 * `globalThis.salus`. Configured through the environment the launcher sets.
 */
import { ServiceConnection } from './connection.js';
import { installRemoteWebGpu } from './remote/install.js';
import { createSdk } from './sdk.js';
import { installFrameworkAdapters } from './adapters/index.js';
import { resolveSocketPath } from '../platform/socketPath.js';
import type { JobHints } from '../protocol/state.js';

/** Environment variables the launcher passes to a job process. */
export const JOB_ENV = {
  name: 'SALUS_JOB_NAME',
  hints: 'SALUS_JOB_HINTS',
  socket: 'SALUS_SOCKET',
} as const;

function readHints(): JobHints {
  const text = process.env[JOB_ENV.hints];
  if (!text) return {};
  try {
    return JSON.parse(text) as JobHints;
  } catch {
    return {};
  }
}

/** Bytes of JSON that a hello spends at most on the job's arguments (a hello frame is small before it is accepted). */
const HELLO_ARGS_BYTES = 16 * 1024;

/** The job's first arguments, each clipped, whose JSON fits in HELLO_ARGS_BYTES. */
function helloArgs(argv: string[]): string[] {
  const kept: string[] = [];
  let bytes = 0;
  for (const arg of argv.slice(0, 32).map((a) => a.slice(0, 1024))) {
    bytes += Buffer.byteLength(JSON.stringify(arg)) + 1;
    if (bytes > HELLO_ARGS_BYTES) break;
    kept.push(arg);
  }
  return kept;
}

/** A job the service killed exits with this code, as if by SIGTERM (128 + 15). */
const KILLED_EXIT_CODE = 143;

let connection: ServiceConnection;
try {
  connection = await ServiceConnection.open(resolveSocketPath(), {
    role: 'job',
    name: process.env[JOB_ENV.name] || undefined,
    pid: process.pid,
    hints: readHints(),
    // What ran, for the job's history: the module (node made it absolute) and its arguments, clipped to fit the hello.
    file: process.argv[1]?.slice(0, 4096),
    args: helloArgs(process.argv.slice(2)),
  });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

installRemoteWebGpu(connection);
installFrameworkAdapters();
Object.defineProperty(globalThis, 'salus', {
  value: createSdk(connection, connection.welcome.jobId ?? null),
  configurable: true,
  writable: true,
});

// Tell the service how the job ended. On a natural end the socket can still
// flush; on process.exit() the write is best effort (the launcher reports too).
let saidGoodbye = false;
const goodbye = (exitCode: number) => {
  if (saidGoodbye) return;
  saidGoodbye = true;
  connection.send({ t: 'goodbye', exitCode });
  connection.close();
};
process.on('beforeExit', () => goodbye(typeof process.exitCode === 'number' ? process.exitCode : 0));
process.on('exit', (code) => goodbye(code));
// Say on the terminal what the service decided about this job, so a queued job does not look hung.
const jobId = connection.welcome.jobId ?? 'job';
let wasQueued = false;
connection.on('message', (message: { t: string; reason?: string; message?: string; state?: string }) => {
  if (message.t === 'lost') {
    process.stderr.write(`salus: ${message.message ?? 'the service ended this job'}\n`);
  } else if (message.t === 'state' && message.state === 'queued') {
    wasQueued = true;
    process.stderr.write(`salus: ${jobId} is queued: ${message.message ?? 'waiting for GPU memory'}\n`);
  } else if (message.t === 'state' && message.state === 'running' && wasQueued) {
    wasQueued = false;
    process.stderr.write(`salus: ${jobId} admitted, running\n`);
  } else if (message.t === 'state' && message.state === 'failed') {
    // Refused at admission, or ended by the service (its watchdog): either way this job is over.
    process.stderr.write(`salus: ${jobId} failed: ${message.message ?? 'it cannot run on this service'}; exiting\n`);
    process.exit(1);
  } else if (message.t === 'state' && message.state === 'killed') {
    // The service ended this job and may not have signalled this process (it signals only what the OS verifies).
    process.stderr.write(`salus: ${message.message ?? `${jobId} was killed`}; exiting\n`);
    process.exit(KILLED_EXIT_CODE);
  } else if (message.t === 'state' && message.state === 'paused') {
    process.stderr.write(`salus: ${jobId} paused (salus resume ${jobId})\n`);
  }
});
