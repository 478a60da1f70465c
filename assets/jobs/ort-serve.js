/**
 * Example job: an inference server on ONNX Runtime Web answering requests that
 * arrive at a given rate (seeded Poisson arrivals), reporting each request's
 * latency. The model is one of ort-models.js's (built in code, seeded weights,
 * nothing downloaded), loaded once on the WebGPU execution provider with CPU
 * fallback disabled; `--size` picks it and its batch: small = the MLP at batch
 * 1, medium = the conv net at batch 1, large = the conv net at batch 8.
 *
 * Each request is one iteration, marked with `globalThis.salus.iteration`
 * under `salus run` (a plain call under `salus run --local`); the job declares
 * requests + 1 iterations (one warm-up request compiles the kernels first).
 * Latency = answer time − arrival time, so it includes waiting behind earlier
 * requests (and, through the service, behind other jobs). `--rate 0` sends the
 * requests back to back (a closed loop: per-request service time).
 *
 * ORT's WebAssembly takes V8 half a minute to optimize on a small machine;
 * `--liftoff-only` skips that (see ort-infer.js):
 *   `node --liftoff-only bin/salus.js run assets/jobs/ort-serve.js -- --size small --rate 20 --requests 50`
 * Args: --size small|medium|large, --rate R (requests/s, 0 = back to back),
 * --requests N, --ep webgpu|wasm, --seed S.
 * Prints `{"request":..,"arrivalMs":..,"latencyMs":..,"checksum":..}` per request
 * and `{"final":{"requests":..,"checksum":..,"p50Ms":..,"p99Ms":..}}`.
 */
import * as ort from 'onnxruntime-web/webgpu';
import { buildConvNet, buildMlp } from './ort-models.js';
import { prng, uniformArray } from './prng.js';

const SIZES = {
  small: { build: buildMlp, batch: 1 },
  medium: { build: buildConvNet, batch: 1 },
  large: { build: buildConvNet, batch: 8 },
};

function parseArgs(argv) {
  const opts = { size: 'small', rate: 20, requests: 50, ep: 'webgpu', seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    const number = Number(value);
    if (flag === '--size' && value in SIZES) opts.size = value;
    else if (flag === '--ep' && (value === 'webgpu' || value === 'wasm')) opts.ep = value;
    else if (flag === '--rate' && Number.isFinite(number) && number >= 0) opts.rate = number;
    else if (['--requests', '--seed'].includes(flag) && Number.isInteger(number) && number > 0) opts[flag.slice(2)] = number;
    else throw new Error(`ort-serve: bad argument ${flag} ${value ?? ''} (--size small|medium|large, --rate R, --requests N, --ep webgpu|wasm, --seed S)`);
  }
  return opts;
}

/** Arrival offsets (ms from the first) of `count` requests at `rate` per second: exponential gaps, seeded. */
function poissonArrivalsMs(rand, count, rate) {
  const arrivals = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    arrivals.push(t);
    if (rate > 0) t += (-Math.log(1 - rand()) / rate) * 1000;
  }
  return arrivals;
}

/** Position-weighted sum, so a permuted or shifted output changes it. */
function checksumOf(values) {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] * (1 + (i % 7));
  return sum;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const iteration = globalThis.salus?.iteration ?? ((fn) => fn());
  globalThis.salus?.setHints({ iterations: opts.requests + 1 });
  // One thread: ORT's worker threads would only compete with the GPU (and the service) for the cores.
  ort.env.wasm.numThreads = 1;
  const { build, batch } = SIZES[opts.size];
  const model = build(batch, opts.seed);
  const session = await ort.InferenceSession.create(model.bytes, {
    executionProviders: [opts.ep],
    // ORT's session config key "session.disable_cpu_ep_fallback": every node on the chosen provider, or no session.
    extra: opts.ep === 'webgpu' ? { session: { disable_cpu_ep_fallback: '1' } } : undefined,
  });
  const inputSize = model.inputDims.reduce((a, b) => a * b, 1);
  const requestRand = prng(opts.seed + 1000);
  const answer = (values) => iteration(async () => {
    const input = new ort.Tensor('float32', values, model.inputDims);
    const outputs = await session.run({ [model.inputName]: input });
    const checksum = checksumOf(outputs[session.outputNames[0]].data);
    input.dispose();
    for (const output of Object.values(outputs)) output.dispose();
    return checksum;
  });

  const warmupStart = performance.now();
  await answer(uniformArray(prng(opts.seed + 3000), inputSize, 1));
  console.log(JSON.stringify({ warmupMs: Number((performance.now() - warmupStart).toFixed(2)), model: model.name, batch, ep: opts.ep }));

  const arrivalsMs = poissonArrivalsMs(prng(opts.seed + 2000), opts.requests, opts.rate);
  const latenciesMs = [];
  let total = 0;
  const start = performance.now();
  for (let r = 0; r < opts.requests; r++) {
    const wait = start + arrivalsMs[r] - performance.now();
    if (wait > 0) await sleep(wait);
    const checksum = await answer(uniformArray(requestRand, inputSize, 1));
    const latencyMs = performance.now() - start - arrivalsMs[r];
    latenciesMs.push(latencyMs);
    total += checksum;
    console.log(JSON.stringify({ request: r, arrivalMs: Number(arrivalsMs[r].toFixed(2)), latencyMs: Number(latencyMs.toFixed(2)), checksum }));
  }
  await session.release();

  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const round = (ms) => Number(ms.toFixed(2));
  console.log(JSON.stringify({
    final: { requests: opts.requests, checksum: total, p50Ms: round(quantile(sorted, 0.5)), p99Ms: round(quantile(sorted, 0.99)), maxMs: round(sorted[sorted.length - 1]) },
  }));
}

await main();
