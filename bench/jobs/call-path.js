/**
 * Bench job for the call path: how much each WebGPU call and each await costs.
 * - ping: `onSubmittedWorkDone()` with nothing submitted, `--pings` times (one
 *   round trip to the service and back, or Dawn's own on a local device);
 * - dispatch: one compute pass of `--dispatches` tiny dispatches (setBindGroup +
 *   dispatchWorkgroups(1) each) in one submit, then onSubmittedWorkDone,
 *   `--submits` times. The last count is read back to check every dispatch ran;
 * - cheap: batches of cheap commands, each an encoder of `--cheap-passes`
 *   passes of `--cheap-triples` × (setPipeline, setBindGroup,
 *   dispatchWorkgroups(0)), submitted and awaited; `--cheap-warmup` batches
 *   first, untimed (at least one), then `--cheap-batches` batches, or as many as fit in
 *   `--cheap-seconds` when that is given. Timed: the job's process CPU
 *   (`process.cpuUsage`) and, with `--service-pid PID`, the CPU of that
 *   process (the service: its live threads' schedstat, in nanoseconds; /proc/PID/stat's
 *   10 ms ticks came to a tenth of a µs per command in a quick run; Linux), read just
 *   before the first timed batch and just after the last one resolved.
 * Phases with a zero count are skipped. With `--gpu-times 1` every submit is timed on the GPU's clock
 * (gpuTimes.js: timestamps around it) and the dispatch submits' times are printed as
 * `{"ev":"gpu","us":[...]}` (an instrumented run: not for the wall-time figures). Imports nothing of ours.
 *
 * Prints `{"ev":"ping","ms":[...],"cpuMs","userMs","systemMs","serviceCpuMs","serviceMainCpuMs"}` (the
 * job's CPU over the pings and, with `--service-pid`, the service's: its live threads and its main thread,
 * from their schedstat), `{"ev":"dispatch","i","count","ms"}` per
 * submit, `{"ev":"cheap","commands","batches","perBatch","cpuMs","serviceCpuMs","wallMs","start","ends":[...]}`
 * (commands counted: the setPipeline, setBindGroup and dispatch calls; `ends`: each
 * timed batch's end, epoch ms) and `{"ev":"verified","count"}`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { installGpuTimes } from './gpuTimes.js';

const now = () => performance.timeOrigin + performance.now();

function parseArgs(argv) {
  const opts = {
    pings: 200, dispatches: 10000, submits: 5,
    cheapBatches: 0, cheapSeconds: 0, cheapWarmup: 5, cheapPasses: 10, cheapTriples: 100, servicePid: 0, gpuTimes: 0,
  };
  const names = {
    '--pings': 'pings', '--dispatches': 'dispatches', '--submits': 'submits',
    '--cheap-batches': 'cheapBatches', '--cheap-seconds': 'cheapSeconds', '--cheap-warmup': 'cheapWarmup',
    '--cheap-passes': 'cheapPasses', '--cheap-triples': 'cheapTriples', '--service-pid': 'servicePid', '--gpu-times': 'gpuTimes',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isFinite(value)) throw new Error(`call-path: bad argument ${argv[i]} ${argv[i + 1] ?? ''}`);
    opts[key] = value;
  }
  return opts;
}

/** CPU ms of process `pid`'s main thread so far, from /proc/PID/schedstat (nanoseconds on the CPU; Linux). */
function mainThreadCpuMs(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** CPU ms of process `pid`'s live threads so far, from each one's schedstat (unlike /proc/PID/stat's ticks, exact). */
function threadsCpuMs(pid) {
  let ms = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ms += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
    } catch {
      // The thread ended.
    }
  }
  return ms;
}

const opts = parseArgs(process.argv.slice(2));
/** With --gpu-times: each submit's GPU µs by the epoch ms it was made at, and the reader of what is pending. */
const gpuSubmits = [];
const flushGpuTimes = opts.gpuTimes ? installGpuTimes((t, us) => gpuSubmits.push([t, us])) : null;
const dispatchSpans = [];
const adapter = await navigator.gpu.requestAdapter();
if (!adapter) throw new Error('call-path: no WebGPU adapter');
const device = await adapter.requestDevice({ label: 'call-path' });

if (opts.pings > 0) {
  const pings = [];
  const serviceBefore = opts.servicePid ? threadsCpuMs(opts.servicePid) : 0;
  const serviceMainBefore = opts.servicePid ? mainThreadCpuMs(opts.servicePid) : 0;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < opts.pings; i++) {
    const start = now();
    await device.queue.onSubmittedWorkDone();
    pings.push(now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  console.log(JSON.stringify({
    ev: 'ping', ms: pings, cpuMs: (cpu.user + cpu.system) / 1000, userMs: cpu.user / 1000, systemMs: cpu.system / 1000,
    serviceCpuMs: opts.servicePid ? threadsCpuMs(opts.servicePid) - serviceBefore : null,
    serviceMainCpuMs: opts.servicePid ? mainThreadCpuMs(opts.servicePid) - serviceMainBefore : null,
  }));
}

// Every dispatch adds one to a counter: the readback proves they all ran.
const module = device.createShaderModule({
  label: 'count',
  code: '@group(0) @binding(0) var<storage, read_write> n: array<u32>;\n@compute @workgroup_size(1) fn main() { n[0] += 1u; }',
});
const pipeline = device.createComputePipeline({ label: 'count', layout: 'auto', compute: { module, entryPoint: 'main' } });
const counter = device.createBuffer({ label: 'counter', size: 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: counter } }] });
for (let i = 0; i < opts.submits; i++) {
  const start = now();
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  for (let d = 0; d < opts.dispatches; d++) {
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(1);
  }
  pass.end();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  dispatchSpans.push([start, now()]);
  console.log(JSON.stringify({ ev: 'dispatch', i, count: opts.dispatches, ms: now() - start }));
}

/** One batch of cheap commands (dispatches of zero workgroups run nothing, so the count stays), submitted and awaited. */
async function cheapBatch() {
  const encoder = device.createCommandEncoder();
  for (let p = 0; p < opts.cheapPasses; p++) {
    const pass = encoder.beginComputePass();
    for (let c = 0; c < opts.cheapTriples; c++) {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(0);
    }
    pass.end();
  }
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
}

if (flushGpuTimes && opts.submits > 0) {
  await flushGpuTimes();
  const inDispatches = gpuSubmits.filter(([t]) => dispatchSpans.some(([from, to]) => t >= from && t <= to));
  console.log(JSON.stringify({ ev: 'gpu', us: inDispatches.map(([, us]) => us) }));
}

if (opts.cheapBatches > 0 || opts.cheapSeconds > 0) {
  for (let i = 0; i < Math.max(1, opts.cheapWarmup); i++) await cheapBatch();
  // On a local device Dawn prints, once, a warning about zero-workgroup dispatches to this
  // process's stdout with no newline after it: end its line, or it runs into the JSON below.
  process.stdout.write('\n');
  const ends = [];
  const serviceBefore = opts.servicePid ? threadsCpuMs(opts.servicePid) : 0;
  const cpuBefore = process.cpuUsage();
  const start = now();
  const until = start + opts.cheapSeconds * 1000;
  while (opts.cheapSeconds > 0 ? now() < until : ends.length < opts.cheapBatches) {
    await cheapBatch();
    ends.push(now());
  }
  const wallMs = now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const serviceCpuMs = opts.servicePid ? threadsCpuMs(opts.servicePid) - serviceBefore : null;
  const perBatch = 3 * opts.cheapPasses * opts.cheapTriples;
  console.log(JSON.stringify({
    ev: 'cheap', commands: perBatch * ends.length, batches: ends.length, perBatch,
    cpuMs: (cpu.user + cpu.system) / 1000, serviceCpuMs, wallMs, start, ends,
  }));
}

const readback = device.createBuffer({ label: 'counter readback', size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const encoder = device.createCommandEncoder();
encoder.copyBufferToBuffer(counter, 0, readback, 0, 4);
device.queue.submit([encoder.finish()]);
await readback.mapAsync(GPUMapMode.READ);
const count = new Uint32Array(readback.getMappedRange())[0];
readback.unmap();
if (count !== opts.dispatches * opts.submits) throw new Error(`call-path: counted ${count} dispatches, expected ${opts.dispatches * opts.submits}`);
console.log(JSON.stringify({ ev: 'verified', count }));
device.destroy();
