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
 */
import { createConnection, createServer } from 'node:net';
import { readFileSync } from 'node:fs';

/** CPU ms of process `pid`'s main thread so far, from /proc/PID/schedstat (nanoseconds on the CPU; Linux). */
function mainThreadCpuMs(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

const now = () => performance.timeOrigin + performance.now();
const [role, path, ...rest] = process.argv.slice(2);

if (role === 'echo') {
  const server = createServer((socket) => socket.on('data', (chunk) => socket.write(chunk)));
  server.listen(path, () => console.log(JSON.stringify({ ev: 'listening' })));
} else if (role === 'ping') {
  const opts = { pings: 200, bytes: 64, echoPid: 0 };
  for (let i = 0; i < rest.length; i += 2) {
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
    });
    ms.push(now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const echoCpuMs = opts.echoPid ? mainThreadCpuMs(opts.echoPid) - echoBefore : null;
  socket.end();
  console.log(JSON.stringify({ ev: 'ping', ms, cpuMs: (cpu.user + cpu.system) / 1000, userMs: cpu.user / 1000, systemMs: cpu.system / 1000, echoCpuMs }));
} else {
  throw new Error('socket-ping: usage: socket-ping.js echo PATH | ping PATH [--pings N] [--bytes B] [--echo-pid PID]');
}
