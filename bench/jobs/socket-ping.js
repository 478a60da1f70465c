/**
 * The floor under every awaited WebGPU call through the service: a raw
 * Node↔Node Unix-socket round trip, no WebGPU and no Salus. Not a job (plain
 * `node`, imports nothing of ours): bench/wire.ts starts two of these.
 *
 * - `socket-ping.js echo PATH`: listens on PATH, prints `{"ev":"listening"}`,
 *   and writes every byte it reads back to its sender, until killed;
 * - `socket-ping.js ping PATH [--pings N] [--bytes B]`: connects, then N times
 *   writes B bytes (default 64) and waits until B bytes came back, one message
 *   in flight at a time (as an awaited call is); prints `{"ev":"ping","ms":[...]}`
 *   (the shape bench/jobs/call-path.js prints) and exits.
 */
import { createConnection, createServer } from 'node:net';

const now = () => performance.timeOrigin + performance.now();
const [role, path, ...rest] = process.argv.slice(2);

if (role === 'echo') {
  const server = createServer((socket) => socket.on('data', (chunk) => socket.write(chunk)));
  server.listen(path, () => console.log(JSON.stringify({ ev: 'listening' })));
} else if (role === 'ping') {
  const opts = { pings: 200, bytes: 64 };
  for (let i = 0; i < rest.length; i += 2) {
    const key = { '--pings': 'pings', '--bytes': 'bytes' }[rest[i]];
    const value = Number(rest[i + 1]);
    if (!key || !(value > 0)) throw new Error(`socket-ping: bad argument ${rest[i]} ${rest[i + 1] ?? ''}`);
    opts[key] = value;
  }
  const socket = createConnection(path);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const message = Buffer.alloc(opts.bytes, 7);
  let pending = 0;
  let arrived = () => {};
  socket.on('data', (chunk) => {
    pending -= chunk.length;
    if (pending <= 0) arrived();
  });
  const ms = [];
  for (let i = 0; i < opts.pings; i++) {
    const start = now();
    pending = opts.bytes;
    await new Promise((resolve) => {
      arrived = resolve;
      socket.write(message);
    });
    ms.push(now() - start);
  }
  socket.end();
  console.log(JSON.stringify({ ev: 'ping', ms }));
} else {
  throw new Error('socket-ping: usage: socket-ping.js echo PATH | ping PATH [--pings N] [--bytes B]');
}
