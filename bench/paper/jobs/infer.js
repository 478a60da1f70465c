// Paper bench: a small "inference server". Persistent weights of --persistent
// bytes; every request allocates an ephemeral buffer of --ephemeral bytes, runs a
// tiny kernel over --threads elements of it (batch 1) and reads one number back,
// inside one SDK iteration. Requests arrive open-loop: the next one is due
// --interval-ms × U(1 − jitter, 1 + jitter) after the previous one was due (at
// once if that time has passed), whatever the service does.
//
// After a warm-up request it prints {"ready":…} and waits until --start-file
// exists (a barrier, so every copy starts together), then waits a random part of
// one interval and serves requests for --duration-ms. Prints one last line with
// every request's latency (ms, from sending it to its result read back), how late
// it was sent after it was due (timer lateness: CPU contention in this process)
// and when it was due (ms after the start). With --end-file it then stays (idle,
// still admitted) until that file exists, so no copy's exit disturbs the others'
// last requests. Imports nothing of ours.
import { existsSync } from 'node:fs';

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i];
  if (arg.startsWith('--')) args[arg.slice(2)] = process.argv[i + 1];
}
const persistentBytes = Math.max(256, Number(args.persistent ?? 65536));
const ephemeralBytes = Math.max(256, Number(args.ephemeral ?? 65536));
const threads = Math.max(1, Math.floor(Number(args.threads ?? 256)));
const intervalMs = Number(args['interval-ms'] ?? 1000);
const jitter = Number(args.jitter ?? 0.5);
const durationMs = Number(args['duration-ms'] ?? 10_000);
const startFile = args['start-file'];
let seed = Number(args.seed ?? 1) >>> 0;
const random = () => { // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const iteration = globalThis.salus ? (fn) => globalThis.salus.iteration(fn) : (fn) => fn();
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const adapter = await navigator.gpu.requestAdapter();
const device = await adapter.requestDevice();
device.addEventListener('uncapturederror', (e) => console.log(JSON.stringify({ uncaptured: e.error.message })));
const U = GPUBufferUsage;

const weights = device.createBuffer({ label: 'weights', size: persistentBytes - 32, usage: U.STORAGE | U.COPY_DST });
device.queue.writeBuffer(weights, 0, new Float32Array((persistentBytes - 32) / 4).fill(0.5));
const result = device.createBuffer({ label: 'result', size: 16, usage: U.STORAGE | U.COPY_SRC });
const readback = device.createBuffer({ label: 'readback', size: 16, usage: U.MAP_READ | U.COPY_DST });
const module = device.createShaderModule({
  label: 'infer',
  code: `
    @group(0) @binding(0) var<storage, read> weights: array<f32>;
    @group(0) @binding(1) var<storage, read_write> activations: array<f32>;
    @group(0) @binding(2) var<storage, read_write> result: array<f32>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) id: vec3u) {
      let i = id.x;
      if (i >= ${threads}u || i >= arrayLength(&activations)) { return; }
      let x = weights[i % arrayLength(&weights)] * f32(i);
      activations[i] = x;
      if (i == 0u) { result[0] = x + 1.0; }
    }`,
});
const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });

async function request() {
  return iteration(async () => {
    const activations = device.createBuffer({ label: 'activations', size: ephemeralBytes, usage: U.STORAGE });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: weights } }, { binding: 1, resource: { buffer: activations } }, { binding: 2, resource: { buffer: result } }],
    }));
    pass.dispatchWorkgroups(Math.ceil(threads / 64));
    pass.end();
    encoder.copyBufferToBuffer(result, 0, readback, 0, 16);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const value = new Float32Array(readback.getMappedRange())[0];
    readback.unmap();
    activations.destroy();
    return value;
  });
}

const warmupStart = now();
await request();
console.log(JSON.stringify({ ready: now(), warmupMs: now() - warmupStart }));
if (startFile) while (!existsSync(startFile)) await sleep(50);

const start = now();
const end = start + durationMs;
let due = start + random() * intervalMs;
const latencies = [];
const lateness = [];
const at = [];
while (due < end) {
  await sleep(due - now());
  const sent = now();
  await request();
  latencies.push(Number((now() - sent).toFixed(3)));
  lateness.push(Number((sent - due).toFixed(3)));
  at.push(Math.round(due - start));
  due += intervalMs * (1 - jitter + 2 * jitter * random());
  if (due < now()) due = now();
}
console.log(JSON.stringify({ done: true, requests: latencies.length, latencies, lateness, at }));
if (args['end-file']) while (!existsSync(args['end-file'])) await sleep(100);
