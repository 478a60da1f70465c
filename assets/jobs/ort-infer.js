/**
 * Example job: an inference server on ONNX Runtime Web, used as any ORT user
 * would. It builds two small ONNX models in code (assets/jobs/ort-models.js: an
 * MLP and a conv net, seeded weights), loads them one after the other on the
 * WebGPU execution provider with CPU fallback disabled (a node WebGPU cannot
 * run fails the session instead of running on the CPU), answers `--requests`
 * requests of seeded synthetic inputs with each, and releases the first session
 * before loading the second (ORT then destroys its GPUDevice and asks for a
 * fresh adapter and device). `--ep wasm` runs the same on ORT's CPU provider,
 * for comparison.
 *
 * ORT's 26 MB WebAssembly module takes V8 about half a minute of CPU to
 * optimize on a small machine; node's `--liftoff-only` skips that (and runs
 * these small models no slower):
 *   `node --liftoff-only bin/salus.js run assets/jobs/ort-infer.js -- --requests 8`
 * (salus run passes its own node flags on to the job), or locally:
 *   `node --liftoff-only bin/salus.js run --local assets/jobs/ort-infer.js -- --ep wasm`
 * Args: --ep webgpu|wasm, --requests N, --batch B, --seed S.
 * Prints one JSON line per model, `{"model":..,"ep":..,"checksum":..,..}`, and
 * `{"final":{"ep":..,"checksum":..}}`.
 */
import * as ort from 'onnxruntime-web/webgpu';
import { buildConvNet, buildMlp } from './ort-models.js';
import { prng, uniformArray } from './prng.js';

function parseArgs(argv) {
  const opts = { ep: 'webgpu', requests: 8, batch: 4, seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--ep' && (value === 'webgpu' || value === 'wasm')) opts.ep = value;
    else if (['--requests', '--batch', '--seed'].includes(flag) && Number.isInteger(Number(value)) && Number(value) > 0) opts[flag.slice(2)] = Number(value);
    else throw new Error(`ort-infer: bad argument ${flag} ${value ?? ''} (--ep webgpu|wasm, --requests N, --batch B, --seed S)`);
  }
  return opts;
}

/** Position-weighted sum, so a permuted or shifted output changes it. */
function checksumOf(values) {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] * (1 + (i % 7));
  return sum;
}

/** Loads `model`, answers `requests` requests, releases the session; returns the model's summary line. */
async function serve(model, opts, requestRand) {
  const loadStart = performance.now();
  const session = await ort.InferenceSession.create(model.bytes, {
    executionProviders: [opts.ep],
    // ORT's session config key "session.disable_cpu_ep_fallback": every node on the chosen provider, or no session.
    extra: opts.ep === 'webgpu' ? { session: { disable_cpu_ep_fallback: '1' } } : undefined,
  });
  const loadMs = performance.now() - loadStart;
  const size = model.inputDims.reduce((a, b) => a * b, 1);
  let checksum = 0;
  let absSum = 0;
  let first = [];
  const requestMs = [];
  for (let r = 0; r < opts.requests; r++) {
    const requestStart = performance.now();
    const input = new ort.Tensor('float32', uniformArray(requestRand, size, 1), model.inputDims);
    const outputs = await session.run({ [model.inputName]: input });
    const logits = outputs[session.outputNames[0]].data;
    checksum += checksumOf(logits);
    for (const v of logits) absSum += Math.abs(v);
    if (r === 0) first = Array.from(logits.subarray(0, 4));
    input.dispose();
    for (const output of Object.values(outputs)) output.dispose();
    requestMs.push(performance.now() - requestStart);
  }
  await session.release();
  // The first request compiles the model's kernels; the others show the steady cost.
  const rest = requestMs.slice(1);
  const steadyMs = rest.length ? rest.reduce((a, b) => a + b, 0) / rest.length : NaN;
  return {
    model: model.name, ep: opts.ep, requests: opts.requests, batch: opts.batch, checksum, absSum, first,
    loadMs: Math.round(loadMs), firstRequestMs: Math.round(requestMs[0]), msPerRequest: Number(steadyMs.toFixed(2)),
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  // One thread: ORT's worker threads would only compete with the GPU (and the service) for the cores.
  ort.env.wasm.numThreads = 1;
  const requestRand = prng(opts.seed + 1000);
  let total = 0;
  for (const build of [buildMlp, buildConvNet]) {
    const line = await serve(build(opts.batch, opts.seed), opts, requestRand);
    console.log(JSON.stringify(line));
    total += line.checksum;
  }
  console.log(JSON.stringify({ final: { ep: opts.ep, checksum: total } }));
}

await main();
