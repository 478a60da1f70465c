/**
 * Bench job for the call path: how much each WebGPU call and each await costs.
 * - ping: `onSubmittedWorkDone()` with nothing submitted, `--pings` times (one
 *   round trip to the service and back, or Dawn's own on a local device);
 * - dispatch: one compute pass of `--dispatches` tiny dispatches (setBindGroup +
 *   dispatchWorkgroups(1) each) in one submit, then onSubmittedWorkDone,
 *   `--submits` times. The last count is read back to check every dispatch ran.
 * Imports nothing of ours.
 *
 * Prints `{"ev":"ping","ms":[...]}` and `{"ev":"dispatch","i","count","ms"}` per submit.
 */
const now = () => performance.timeOrigin + performance.now();

function parseArgs(argv) {
  const opts = { pings: 200, dispatches: 10000, submits: 5 };
  const names = { '--pings': 'pings', '--dispatches': 'dispatches', '--submits': 'submits' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isFinite(value)) throw new Error(`call-path: bad argument ${argv[i]} ${argv[i + 1] ?? ''}`);
    opts[key] = value;
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const adapter = await navigator.gpu.requestAdapter();
if (!adapter) throw new Error('call-path: no WebGPU adapter');
const device = await adapter.requestDevice({ label: 'call-path' });

const pings = [];
for (let i = 0; i < opts.pings; i++) {
  const start = now();
  await device.queue.onSubmittedWorkDone();
  pings.push(now() - start);
}
console.log(JSON.stringify({ ev: 'ping', ms: pings }));

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
  console.log(JSON.stringify({ ev: 'dispatch', i, count: opts.dispatches, ms: now() - start }));
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
