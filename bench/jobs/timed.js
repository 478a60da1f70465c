/**
 * Bench wrapper job: runs an example job unmodified and stamps each JSON line
 * it prints with `t`, the epoch ms at which it was printed
 * (`performance.timeOrigin + now()`). With the example's `--log-every 1` that is
 * the end of every training step (the loss has been read back), so the bench
 * gets per-iteration times from outside the example. Imports nothing of ours;
 * runs under `salus run` and `salus run --local` alike.
 *
 * As a job of a trace (bench/traceRun.ts), it first loads the modules named by
 * `--preload` (the framework, so Node's import of it stays out of the trace: the
 * example's own import then finds it loaded), opens a GPU device (through the
 * service, so the job is admitted now), prints `{"ready"}`, waits until the
 * file of `--start-file` exists, reads the trace's start (epoch ms) from it, and
 * starts the example at start + `--arrival-ms`, printing `{"arrived"}`.
 *
 * With `--gpu-times`, every submit's GPU time is measured with timestamp queries
 * (gpuTimes.js) and printed, once the example is done, as one line
 * `{"gpuSubmits":[[t, µs], ...]}` (t: epoch ms of the submit call).
 *
 * Usage: `salus run bench/jobs/timed.js -- [--preload MODULE]... [--start-file F
 * [--arrival-ms A]] [--gpu-times] EXAMPLE [EXAMPLE ARGS...]` (EXAMPLE relative to the working directory).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { installGpuTimes } from './gpuTimes.js';

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((done) => setTimeout(done, Math.max(0, ms)));

const argv = process.argv.slice(2);
const preload = [];
let startFile = null;
let arrivalMs = 0;
let gpuTimes = false;
while (argv[0]?.startsWith('--')) {
  if (argv[0] === '--gpu-times') {
    argv.shift();
    gpuTimes = true;
    continue;
  }
  const [flag, value] = argv.splice(0, 2);
  if (flag === '--preload') preload.push(value);
  else if (flag === '--start-file') startFile = value;
  else if (flag === '--arrival-ms') arrivalMs = Number(value);
  else throw new Error(`timed.js: unknown option ${flag}`);
}
const [example, ...args] = argv;
if (!example) throw new Error('timed.js: usage: timed.js [--preload M]... [--start-file F [--arrival-ms A]] [--gpu-times] EXAMPLE [ARGS...]');
const path = resolve(example);

const gpuSubmits = [];
const flushGpuTimes = gpuTimes ? installGpuTimes((t, us) => gpuSubmits.push([t, us])) : null;
let finalFlush = null;

const print = console.log.bind(console);
console.log = (...values) => {
  const t = now();
  if (values.length === 1 && typeof values[0] === 'string' && values[0].startsWith('{')) {
    try {
      const json = JSON.parse(values[0]);
      print(JSON.stringify({ t, ...json }));
      // The example's last line: read the stamps back before its cleanup can destroy its device.
      if (json.final && flushGpuTimes) finalFlush ??= flushGpuTimes();
      return;
    } catch {
      // Not JSON after all: print as is.
    }
  }
  print(...values);
};

// Bare names resolve from this repository's node_modules, as the examples' own imports do.
for (const name of preload) await import(name);
if (startFile) {
  // A device of its own, opened now, makes the job known to the service (and admitted)
  // in the order the bench starts the trace's jobs, before their arrivals.
  await (await navigator.gpu.requestAdapter())?.requestDevice();
  print(JSON.stringify({ ready: now() }));
  // The bench writes the file whole (write, then rename).
  while (!existsSync(startFile)) await sleep(20);
  const start = Number(readFileSync(startFile, 'utf8'));
  if (!(start > 0)) throw new Error(`timed.js: no start time in ${startFile}`);
  await sleep(start + arrivalMs - now());
  print(JSON.stringify({ arrived: now() }));
}

// The example reads its own arguments from process.argv.
process.argv = [process.argv[0], path, ...args];
print(JSON.stringify({ ev: 'start', t: now() }));
await import(pathToFileURL(path).href);
if (flushGpuTimes) {
  // The examples end with `await main()`: their work is done, their device still open.
  await finalFlush;
  await flushGpuTimes();
  print(JSON.stringify({ gpuSubmits: gpuSubmits.sort((a, b) => a[0] - b[0]) }));
}
