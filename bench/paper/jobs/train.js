// Paper bench: a small "training" job. Persistent weights, one ephemeral scratch
// buffer per iteration, a kernel whose cost is set by --work, one SDK iteration
// per step (falls back to plain calls outside Salus). Prints two JSON lines: when
// it is ready, and at the end the first step's start and the last step's end
// (epoch ms) and every step's duration in ms. Imports nothing of ours.
//
// With --start-file F --arrival-ms A it is a job of a trace: once set up it waits
// until F exists, reads the trace's start (epoch ms) from it and begins its first
// step at start + A.
//
// salus run --iterations N --persistent P --ephemeral E bench/paper/jobs/train.js -- \
//   --iterations N --work K --persistent P --ephemeral E [--start-file F --arrival-ms A]
import { existsSync, readFileSync } from 'node:fs';

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i];
  if (arg.startsWith('--')) args[arg.slice(2)] = process.argv[i + 1];
}
const iterations = Number(args.iterations ?? 20);
const persistentBytes = Math.max(256, Number(args.persistent ?? 65536));
const ephemeralBytes = Math.max(256, Number(args.ephemeral ?? 65536));
const work = Math.max(1, Math.floor(Number(args.work ?? 16)));
const iteration = globalThis.salus ? (fn) => globalThis.salus.iteration(fn) : (fn) => fn();
const now = () => performance.timeOrigin + performance.now();

const adapter = await navigator.gpu.requestAdapter();
const device = await adapter.requestDevice();
device.addEventListener('uncapturederror', (e) => console.log(JSON.stringify({ uncaptured: e.error.message })));
const U = GPUBufferUsage;

// Persistent: weights (the declared bytes less the two small result buffers).
const weights = device.createBuffer({ label: 'weights', size: persistentBytes - 32, usage: U.STORAGE | U.COPY_DST });
device.queue.writeBuffer(weights, 0, new Float32Array((persistentBytes - 32) / 4).map((_, i) => (i % 7) * 0.25));
const result = device.createBuffer({ label: 'result', size: 16, usage: U.STORAGE | U.COPY_SRC });
const readback = device.createBuffer({ label: 'readback', size: 16, usage: U.MAP_READ | U.COPY_DST });
const module = device.createShaderModule({
  label: 'train',
  code: `
    @group(0) @binding(0) var<storage, read> weights: array<f32>;
    @group(0) @binding(1) var<storage, read_write> scratch: array<f32>;
    @group(0) @binding(2) var<storage, read_write> result: array<f32>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) id: vec3u) {
      let i = id.x;
      if (i >= arrayLength(&scratch)) { return; }
      var acc = f32(i % 13u);
      for (var k = 0u; k < ${work}u; k++) { acc = fract(acc * 1.0001 + weights[(i + k) % arrayLength(&weights)]); }
      scratch[i] = acc;
      if (i == 0u) { result[0] = acc + result[0]; }
    }`,
});
const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
console.log(JSON.stringify({ ready: now() }));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
let arrival = null;
if (args['start-file']) {
  // The bench writes the file whole (write, then rename).
  while (!existsSync(args['start-file'])) await sleep(20);
  const start = Number(readFileSync(args['start-file'], 'utf8'));
  if (!(start > 0)) throw new Error(`train.js: no start time in ${args['start-file']}`);
  arrival = start + Number(args['arrival-ms'] ?? 0);
  await sleep(arrival - now());
}

const n = Math.floor(ephemeralBytes / 4);
const steps = [];
let firstStart = null;
let lastEnd = null;
let checksum = 0;
for (let step = 0; step < iterations; step++) {
  const start = now();
  await iteration(async () => {
    const scratch = device.createBuffer({ label: 'scratch', size: n * 4, usage: U.STORAGE });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: weights } }, { binding: 1, resource: { buffer: scratch } }, { binding: 2, resource: { buffer: result } }],
    }));
    pass.dispatchWorkgroups(Math.ceil(n / 64));
    pass.end();
    encoder.copyBufferToBuffer(result, 0, readback, 0, 16);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    checksum = new Float32Array(readback.getMappedRange())[0];
    readback.unmap();
    scratch.destroy();
  });
  const end = now();
  firstStart ??= start;
  lastEnd = end;
  steps.push(Number((end - start).toFixed(3)));
}
console.log(JSON.stringify({ done: true, iterations, arrival, firstStart, lastEnd, checksum, steps }));
