/**
 * The floor under every awaited WebGPU call through the service: a raw
 * Node↔Node Unix-socket round trip, no WebGPU and no Salus. Not a job (plain
 * `node`, imports nothing of ours): bench/wire.ts starts two of these.
 *
 * - `socket-ping.js echo PATH`: listens on PATH, prints `{"ev":"listening"}`,
 *   and writes every byte it reads back to its sender, until killed;
 * - `socket-ping.js ping PATH [--pings N] [--bytes B]`: connects, then N times
 *   writes B bytes (default 64) and waits until B bytes came back, one message
 *   in flight at a time (as an awaited call is), reading into one reused buffer
 *   (as a job does); prints `{"ev":"ping","ms":[...],"cpuMs",...}`
 *   (the shape bench/jobs/call-path.js prints; with `--echo-pid PID` also `echoCpuMs`, that
 *   process's main thread over the pings) and exits.
 *
 * `--awake-us US` (either role): after each write, keep the event loop turning for US µs (a chain of
 * setImmediate) instead of sleeping in epoll_wait when the peer's last turnaround came within 2 × US, as
 * the service and a job do (core/platform/quickTurns.ts): the like-for-like floor for the service's round
 * trip. Without it both processes sleep between messages and each pays a wake-up.
 */
import { createConnection, createServer } from 'node:net';
import { readFileSync } from 'node:fs';

/** CPU ms of process `pid`'s main thread so far, from /proc/PID/schedstat (nanoseconds on the CPU; Linux). */
function mainThreadCpuMs(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

const now = () => performance.timeOrigin + performance.now();
const [role, path, ...rest] = process.argv.slice(2);

/** `--awake-us`'s value among `args` (0 when absent). */
function awakeUsOf(args) {
  const at = args.indexOf('--awake-us');
  return at >= 0 ? Number(args[at + 1]) : 0;
}
const awakeUs = awakeUsOf(rest);
let awakeUntil = 0;
let turning = false;
const turn = () => {
  if (performance.now() < awakeUntil) setImmediate(turn);
  else turning = false;
};
let wroteAt = -1;
let quick = false;
/** Data came: whether it came within twice the window of our last write decides whether the next write spins. */
function arrived() {
  if (wroteAt >= 0) quick = performance.now() - wroteAt <= (2 * awakeUs) / 1000;
  wroteAt = -1;
}
/** After a write: stay awake for `awakeUs` if the peer's last turnaround was quick (nothing with 0). */
function stayAwake() {
  if (awakeUs <= 0) return;
  wroteAt = performance.now();
  if (!quick) return;
  awakeUntil = performance.now() + awakeUs / 1000;
  if (!turning) {
    turning = true;
    setImmediate(turn);
  }
}

if (role === 'echo') {
  const server = createServer((socket) => socket.on('data', (chunk) => {
    arrived();
    socket.write(chunk);
    stayAwake();
  }));
  server.listen(path, () => console.log(JSON.stringify({ ev: 'listening' })));
} else if (role === 'ping') {
  const opts = { pings: 200, bytes: 64, echoPid: 0 };
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === '--awake-us') continue;
    const key = { '--pings': 'pings', '--bytes': 'bytes', '--echo-pid': 'echoPid' }[rest[i]];
    const value = Number(rest[i + 1]);
    if (!key || !(value > 0)) throw new Error(`socket-ping: bad argument ${rest[i]} ${rest[i + 1] ?? ''}`);
    opts[key] = value;
  }
  let pending = 0;
  let arrived = () => {};
  // Reads into one reused buffer, as a job's connection to the service does (core/platform/reusedReads.ts).
  const onread = {
    buffer: Buffer.allocUnsafe(64 * 1024),
    callback: (bytes) => {
      arrived();
      pending -= bytes;
      if (pending <= 0) arrived();
      return true;
    },
  };
  const socket = createConnection({ path, onread });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const message = Buffer.alloc(opts.bytes, 7);
  const ms = [];
  const echoBefore = opts.echoPid ? mainThreadCpuMs(opts.echoPid) : 0;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < opts.pings; i++) {
    const start = now();
    pending = opts.bytes;
    await new Promise((resolve) => {
      arrived = resolve;
      socket.write(message);
      stayAwake();
    });
    ms.push(now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const echoCpuMs = opts.echoPid ? mainThreadCpuMs(opts.echoPid) - echoBefore : null;
  socket.end();
  console.log(JSON.stringify({ ev: 'ping', ms, cpuMs: (cpu.user + cpu.system) / 1000, userMs: cpu.user / 1000, systemMs: cpu.system / 1000, echoCpuMs }));
} else {
  throw new Error('socket-ping: usage: socket-ping.js echo PATH [--awake-us US] | ping PATH [--pings N] [--bytes B] [--echo-pid PID] [--awake-us US]');
}
