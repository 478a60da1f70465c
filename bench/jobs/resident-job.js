/**
 * Bench job for the switch and cold-start benchmark: a small "model" whose
 * weights stay resident, trained one SDK iteration at a time. Imports nothing
 * of ours, so it runs under `salus run` (iterations through
 * `globalThis.salus.iteration`) and `salus run --local` (the function is just
 * called) alike.
 *
 * Startup: device with the adapter's buffer limits, `--weights-mib` of weights
 * uploaded with writeBuffer, one compute pipeline compiled. Each iteration: a
 * probe (`onSubmittedWorkDone` with nothing submitted) that resolves once the
 * service has granted the iteration and replayed its first batch; then one
 * dispatch over the weights (each of 16384 threads sums `--work` of them) into an
 * ephemeral buffer, a 4-byte readback, and the ephemeral buffers destroyed.
 *
 * Prints JSON lines, times in epoch ms (`performance.timeOrigin + now()`, which
 * compares across processes):
 * `{"ev":"ready","t0","device","uploaded","compiled"}` once, then per iteration
 * `{"ev":"iter","i","begin","grant","end"}`: begin = iteration() called, grant =
 * the probe resolved, end = the awaited iteration() resolved.
 * Args: --iterations N, --weights-mib M, --work K.
 */

const THREADS = 16384;
const WORKGROUP = 64;
const now = () => performance.timeOrigin + performance.now();

function parseArgs(argv) {
  const opts = { iterations: 20, weightsMib: 64, work: 512 };
  const names = { '--iterations': 'iterations', '--weights-mib': 'weightsMib', '--work': 'work' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isFinite(value)) throw new Error(`resident-job: bad argument ${argv[i]} ${argv[i + 1] ?? ''}`);
    opts[key] = value;
  }
  return opts;
}

const SHADER = /* wgsl */ `
struct Dims { words: u32, work: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  var s = 0.0;
  for (var k = 0u; k < dims.work; k++) { s += weights[(gid.x + k * ${THREADS}u) % dims.words]; }
  out[gid.x] = s;
}`;

async function main() {
  const t0 = performance.timeOrigin;
  const opts = parseArgs(process.argv.slice(2));
  const sdk = globalThis.salus;
  const iteration = sdk ? (fn) => sdk.iteration(fn) : (fn) => fn();

  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('resident-job: no WebGPU adapter');
  const weightBytes = opts.weightsMib * 1024 * 1024;
  const device = await adapter.requestDevice({
    label: 'resident-job',
    requiredLimits: {
      maxBufferSize: Math.min(adapter.limits.maxBufferSize, Math.max(weightBytes, 256 * 1024 * 1024)),
      maxStorageBufferBindingSize: Math.min(adapter.limits.maxStorageBufferBindingSize, Math.max(weightBytes, 128 * 1024 * 1024)),
    },
  });
  const tDevice = now();

  // Persistent: uniforms and weights.
  const dims = device.createBuffer({ label: 'dims', size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(dims, 0, new Uint32Array([weightBytes / 4, opts.work, 0, 0]));
  const weights = device.createBuffer({ label: 'weights', size: weightBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const values = new Float32Array(weightBytes / 4);
  for (let i = 0; i < values.length; i++) values[i] = (i % 1024) / 1024;
  device.queue.writeBuffer(weights, 0, values);
  await device.queue.onSubmittedWorkDone();
  const tUploaded = now();

  const module = device.createShaderModule({ label: 'resident', code: SHADER });
  const pipeline = await device.createComputePipelineAsync({ label: 'resident', layout: 'auto', compute: { module, entryPoint: 'main' } });
  const tCompiled = now();
  console.log(JSON.stringify({ ev: 'ready', t0, device: tDevice, uploaded: tUploaded, compiled: tCompiled }));

  for (let i = 0; i < opts.iterations; i++) {
    const begin = now();
    let grant = 0;
    await iteration(async () => {
      await device.queue.onSubmittedWorkDone();
      grant = now();
      // Ephemeral: output and readback, gone at the end of the iteration.
      const out = device.createBuffer({ label: 'out', size: THREADS * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
      const readback = device.createBuffer({ label: 'readback', size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const bindGroup = device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [dims, weights, out].map((buffer, binding) => ({ binding, resource: { buffer } })),
      });
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(THREADS / WORKGROUP);
      pass.end();
      encoder.copyBufferToBuffer(out, 0, readback, 0, 4);
      device.queue.submit([encoder.finish()]);
      await readback.mapAsync(GPUMapMode.READ);
      const first = new Float32Array(readback.getMappedRange())[0];
      readback.unmap();
      out.destroy();
      readback.destroy();
      if (!Number.isFinite(first)) throw new Error(`resident-job: bad result ${first}`);
    });
    console.log(JSON.stringify({ ev: 'iter', i, begin, grant, end: now() }));
  }
  weights.destroy();
  dims.destroy();
  device.destroy();
}

await main();
