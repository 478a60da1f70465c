/**
 * Example job: a 2-layer MLP (inputs -> tanh hidden -> 1) trained by plain SGD
 * on a regression task, written directly against WebGPU with WGSL compute
 * shaders. The targets come from a fixed random "teacher" MLP, the inputs from a
 * seeded PRNG, so every run on the same device prints the same numbers.
 *
 * Memory pattern (what Salus cares about):
 * - persistent: the parameters buffer and the uniforms, created once;
 * - ephemeral: each iteration creates the batch, activations, gradients, loss
 *   and readback buffers and destroys them once the loss has been read back.
 * Each iteration is one submit followed by one mapAsync (a host sync point),
 * marked with `globalThis.salus.iteration` under `salus run` (a plain call under
 * `salus run --local`); the total is declared up front with `setHints`.
 *
 * Run: `salus run assets/jobs/wgsl-train.js -- --iterations 200 --batch 64`
 * (or locally: `node dist/core/client/localRun.js assets/jobs/wgsl-train.js -- ...`).
 * Args: --size small|medium|large (batch × hidden 64×32, 512×64, 2048×128; --batch
 * and --hidden given after it win), --iterations N, --batch B, --hidden H, --lr X,
 * --log-every K, --seed S.
 * Prints `{"step":..,"loss":..}` every K steps and `{"final":{"loss":..,"checksum":..}}`.
 */
import { prng, uniformIn } from './prng.js';
import { INPUTS, makeTeacher, parseTrainArgs } from './mlpTask.js';

const WORKGROUP = 64;

// Parameters live in one flat buffer: W1[i*H + j], b1[j], W2[j], b2.
const HEADER = /* wgsl */ `
struct Dims { batch: u32, inputs: u32, hidden: u32, params: u32, lr: f32 }
@group(0) @binding(0) var<uniform> dims: Dims;
fn w1(i: u32, j: u32) -> u32 { return i * dims.hidden + j; }
fn b1(j: u32) -> u32 { return dims.inputs * dims.hidden + j; }
fn w2(j: u32) -> u32 { return dims.inputs * dims.hidden + dims.hidden + j; }
fn b2() -> u32 { return dims.inputs * dims.hidden + 2u * dims.hidden; }
fn x(b: u32, i: u32) -> u32 { return b * dims.inputs + i; }
fn y(b: u32) -> u32 { return dims.batch * dims.inputs + b; }
`;

const kernel = (bindings, body) => `${HEADER}
${bindings}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let k = gid.x;
${body}
}`;

/** Each shader: its storage bindings (binding 0 is always the uniforms) and how many threads it needs. */
const SHADERS = {
  // hidden[b, j] = tanh(b1[j] + sum_i x[b, i] * W1[i, j])
  hidden: kernel(`
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read> data: array<f32>;
@group(0) @binding(3) var<storage, read_write> hidden: array<f32>;`, `
  if (k >= dims.batch * dims.hidden) { return; }
  let b = k / dims.hidden; let j = k % dims.hidden;
  var s = params[b1(j)];
  for (var i = 0u; i < dims.inputs; i++) { s += data[x(b, i)] * params[w1(i, j)]; }
  hidden[k] = tanh(s);`),
  // pred[b] = b2 + sum_j hidden[b, j] * W2[j]; dOut = d(mean sq. error)/d pred
  output: kernel(`
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read> data: array<f32>;
@group(0) @binding(3) var<storage, read> hidden: array<f32>;
@group(0) @binding(4) var<storage, read_write> dOut: array<f32>;
@group(0) @binding(5) var<storage, read_write> sqErr: array<f32>;`, `
  if (k >= dims.batch) { return; }
  var s = params[b2()];
  for (var j = 0u; j < dims.hidden; j++) { s += hidden[k * dims.hidden + j] * params[w2(j)]; }
  let err = s - data[y(k)];
  dOut[k] = 2.0 * err / f32(dims.batch);
  sqErr[k] = err * err;`),
  // dHidden[b, j] = dOut[b] * W2[j] * (1 - hidden^2)
  delta: kernel(`
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read> hidden: array<f32>;
@group(0) @binding(3) var<storage, read> dOut: array<f32>;
@group(0) @binding(4) var<storage, read_write> dHidden: array<f32>;`, `
  if (k >= dims.batch * dims.hidden) { return; }
  let b = k / dims.hidden; let j = k % dims.hidden;
  let h = hidden[k];
  dHidden[k] = dOut[b] * params[w2(j)] * (1.0 - h * h);`),
  // One thread per parameter, summing over the batch in a fixed order (deterministic, no atomics).
  grad: kernel(`
@group(0) @binding(1) var<storage, read> data: array<f32>;
@group(0) @binding(2) var<storage, read> hidden: array<f32>;
@group(0) @binding(3) var<storage, read> dOut: array<f32>;
@group(0) @binding(4) var<storage, read> dHidden: array<f32>;
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;`, `
  if (k >= dims.params) { return; }
  let h = dims.hidden;
  var s = 0.0;
  if (k < b1(0u)) {
    let i = k / h; let j = k % h;
    for (var b = 0u; b < dims.batch; b++) { s += data[x(b, i)] * dHidden[b * h + j]; }
  } else if (k < w2(0u)) {
    let j = k - b1(0u);
    for (var b = 0u; b < dims.batch; b++) { s += dHidden[b * h + j]; }
  } else if (k < b2()) {
    let j = k - w2(0u);
    for (var b = 0u; b < dims.batch; b++) { s += dOut[b] * hidden[b * h + j]; }
  } else {
    for (var b = 0u; b < dims.batch; b++) { s += dOut[b]; }
  }
  grads[k] = s;`),
  update: kernel(`
@group(0) @binding(1) var<storage, read_write> params: array<f32>;
@group(0) @binding(2) var<storage, read> grads: array<f32>;`, `
  if (k >= dims.params) { return; }
  params[k] -= dims.lr * grads[k];`),
  loss: kernel(`
@group(0) @binding(1) var<storage, read> sqErr: array<f32>;
@group(0) @binding(2) var<storage, read_write> loss: array<f32>;`, `
  if (k != 0u) { return; }
  var s = 0.0;
  for (var b = 0u; b < dims.batch; b++) { s += sqErr[b]; }
  loss[0] = s / f32(dims.batch);`),
};

async function main() {
  const opts = parseTrainArgs(process.argv.slice(2), 'wgsl-train', 0.1);
  const gpu = globalThis.navigator?.gpu;
  if (!gpu) throw new Error('wgsl-train: no navigator.gpu; run me with `salus run` (or `salus run --local`)');
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('wgsl-train: no WebGPU adapter');
  const device = await adapter.requestDevice({ label: 'wgsl-train' });
  device.lost.then((info) => {
    if (info.reason !== 'destroyed') console.error(`wgsl-train: device lost: ${info.message}`);
  });

  const { batch: B, hidden: H, iterations } = opts;
  const D = INPUTS;
  const P = D * H + 2 * H + 1;
  const F32 = 4;

  const pipelines = {};
  for (const [name, code] of Object.entries(SHADERS)) {
    const module = device.createShaderModule({ label: name, code });
    pipelines[name] = await device.createComputePipelineAsync({ label: name, layout: 'auto', compute: { module, entryPoint: 'main' } });
  }

  // Persistent: uniforms and parameters.
  const dims = device.createBuffer({ label: 'dims', size: 32, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const dimsData = new ArrayBuffer(32);
  new Uint32Array(dimsData, 0, 4).set([B, D, H, P]);
  new Float32Array(dimsData, 16, 1)[0] = opts.lr;
  device.queue.writeBuffer(dims, 0, dimsData);

  const initRand = prng(opts.seed);
  const params = device.createBuffer({
    label: 'params',
    size: P * F32,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    mappedAtCreation: true,
  });
  const init = new Float32Array(params.getMappedRange());
  for (let p = 0; p < D * H; p++) init[p] = uniformIn(initRand, 1 / Math.sqrt(D));
  for (let p = D * H + H; p < D * H + 2 * H; p++) init[p] = uniformIn(initRand, 1 / Math.sqrt(H));
  params.unmap();

  const teacher = makeTeacher(prng(opts.seed + 1000));
  const dataRand = prng(opts.seed + 2000);
  const storage = (label, floats, extra = 0) =>
    device.createBuffer({ label, size: floats * F32, usage: GPUBufferUsage.STORAGE | extra });
  const bind = (pipeline, buffers) =>
    device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [dims, ...buffers].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  const groups = (n) => Math.ceil(n / WORKGROUP);

  const iteration = globalThis.salus?.iteration ?? ((fn) => fn());
  globalThis.salus?.setHints({ iterations });
  let loss = NaN;
  for (let step = 0; step < iterations; step++) {
    loss = await iteration(async () => {
      // Ephemeral: this iteration's batch, activations, gradients and loss.
      const data = device.createBuffer({ label: 'batch', size: (B * D + B) * F32, usage: GPUBufferUsage.STORAGE, mappedAtCreation: true });
      const values = new Float32Array(data.getMappedRange());
      for (let b = 0; b < B; b++) {
        const x = Array.from({ length: D }, () => uniformIn(dataRand, 1));
        values.set(x, b * D);
        values[B * D + b] = teacher(x);
      }
      data.unmap();
      const hidden = storage('hidden', B * H);
      const dOut = storage('dOut', B);
      const sqErr = storage('sqErr', B);
      const dHidden = storage('dHidden', B * H);
      const grads = storage('grads', P);
      const lossBuffer = storage('loss', 1, GPUBufferUsage.COPY_SRC);
      const readback = device.createBuffer({ label: 'loss readback', size: F32, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

      const encoder = device.createCommandEncoder({ label: `step ${step}` });
      const pass = encoder.beginComputePass();
      const dispatch = (name, buffers, threads) => {
        pass.setPipeline(pipelines[name]);
        pass.setBindGroup(0, bind(pipelines[name], buffers));
        pass.dispatchWorkgroups(groups(threads));
      };
      dispatch('hidden', [params, data, hidden], B * H);
      dispatch('output', [params, data, hidden, dOut, sqErr], B);
      dispatch('delta', [params, hidden, dOut, dHidden], B * H);
      dispatch('grad', [data, hidden, dOut, dHidden, grads], P);
      dispatch('update', [params, grads], P);
      dispatch('loss', [sqErr, lossBuffer], 1);
      pass.end();
      encoder.copyBufferToBuffer(lossBuffer, 0, readback, 0, F32);
      device.queue.submit([encoder.finish()]);

      await readback.mapAsync(GPUMapMode.READ);
      const stepLoss = new Float32Array(readback.getMappedRange())[0];
      readback.unmap();
      for (const buffer of [data, hidden, dOut, sqErr, dHidden, grads, lossBuffer, readback]) buffer.destroy();
      return stepLoss;
    });

    if (!Number.isFinite(loss)) throw new Error(`wgsl-train: loss is ${loss} at step ${step}`);
    if (step % opts.logEvery === 0 || step === iterations - 1) console.log(JSON.stringify({ step, loss }));
  }

  // Checksum: the sum of all parameters, read back once at the end.
  const paramsReadback = device.createBuffer({ label: 'params readback', size: P * F32, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(params, 0, paramsReadback, 0, P * F32);
  device.queue.submit([encoder.finish()]);
  await paramsReadback.mapAsync(GPUMapMode.READ);
  const checksum = new Float32Array(paramsReadback.getMappedRange()).reduce((sum, v) => sum + v, 0);
  paramsReadback.unmap();
  for (const buffer of [paramsReadback, params, dims]) buffer.destroy();
  device.destroy();

  console.log(JSON.stringify({ final: { loss, checksum } }));
}

await main();
