/**
 * ONNX Runtime Web, unmodified, as a job: assets/jobs/ort-infer.js loads an MLP
 * and a conv net one after the other on ORT's WebGPU execution provider (CPU
 * fallback disabled), releasing the first session — and with it ORT's
 * GPUDevice — before it asks for a fresh device for the second. Through
 * `salus run` it must print the very outputs of a local device (`salus run
 * --local`), and match ORT's own CPU (wasm) provider within float tolerance.
 * All three runs go side by side; `--liftoff-only` spares V8 half a minute of
 * optimizing ORT's 26 MB wasm per process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startService, type RunResult, type TestService } from '../helpers/service.js';

const JOB = join(ROOT, 'assets/jobs/ort-infer.js');
const REQUESTS = 4;
const JOB_ARGS = ['--requests', String(REQUESTS), '--batch', '4', '--seed', '7'];
const NODE_FLAGS = ['--liftoff-only'];
const MODELS = ['mlp', 'convnet'];

interface ModelLine {
  model: string;
  ep: string;
  requests: number;
  checksum: number;
  absSum: number;
  first: number[];
}

let service: TestService;
const runs: Record<'remote' | 'local' | 'wasm', RunResult> = {} as never;

/** The per-model lines a run printed, by model name. */
function models(where: keyof typeof runs): Record<string, ModelLine> {
  const run = runs[where];
  if (run.code !== 0) throw new Error(`ort-infer failed (${where}, exit ${run.code}):\n${run.stdout}\n${run.stderr.slice(-4000)}`);
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('{"model"')).map((l) => JSON.parse(l) as ModelLine);
  return Object.fromEntries(lines.map((l) => [l.model, l]));
}

/** Within float32 rounding of sums of a few hundred terms: relative 1e-4, absolute 1e-5. */
function expectClose(actual: number, expected: number, what: string): void {
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-5 + 1e-4 * Math.abs(expected));
}

beforeAll(async () => {
  service = await startService();
  const [remote, local, wasm] = await Promise.all([
    service.startJob([JOB, '--name', 'ort', '--', '--ep', 'webgpu', ...JOB_ARGS], {}, NODE_FLAGS).done,
    service.startJob([JOB, '--local', '--', '--ep', 'webgpu', ...JOB_ARGS], {}, NODE_FLAGS).done,
    service.startJob([JOB, '--local', '--', '--ep', 'wasm', ...JOB_ARGS], {}, NODE_FLAGS).done,
  ]);
  Object.assign(runs, { remote, local, wasm });
}, 150_000);

afterAll(async () => {
  await service?.stop();
});

describe('ONNX Runtime Web (WebGPU execution provider) through salus run', () => {
  it('answers every request of both models on each side', () => {
    for (const where of ['remote', 'local', 'wasm'] as const) {
      const lines = models(where);
      expect(Object.keys(lines), where).toEqual(MODELS);
      for (const line of Object.values(lines)) {
        expect(line, `${where} ${line.model}`).toMatchObject({ ep: where === 'wasm' ? 'wasm' : 'webgpu', requests: REQUESTS });
        expect(line.absSum, `${where} ${line.model}: outputs are not all zero`).toBeGreaterThan(1);
      }
    }
  });

  it('prints exactly the outputs of a local device', () => {
    const remote = models('remote');
    const local = models('local');
    for (const model of MODELS) {
      expect(remote[model].checksum, model).toBe(local[model].checksum);
      expect(remote[model].absSum, model).toBe(local[model].absSum);
      expect(remote[model].first, model).toEqual(local[model].first);
    }
  });

  it('agrees with ORT’s CPU (wasm) provider within float tolerance', () => {
    const gpu = models('remote');
    const cpu = models('wasm');
    for (const model of MODELS) {
      expectClose(gpu[model].checksum, cpu[model].checksum, `${model} checksum`);
      expectClose(gpu[model].absSum, cpu[model].absSum, `${model} sum of |outputs|`);
      gpu[model].first.forEach((v, i) => expectClose(v, cpu[model].first[i], `${model} output ${i}`));
    }
    // Two different models, not one answer printed twice.
    expect(gpu.mlp.checksum).not.toBeCloseTo(gpu.convnet.checksum, 1);
  });

  it('ran as one job of the service, at least an iteration a request', async () => {
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'ort' && j.finishedAt));
    expect(job.state).toBe('done');
    expect(job.error ?? null).toBeNull();
    // Each request ends at ORT's readback; loading adds a few more sync points.
    expect(job.iterations.done).toBeGreaterThanOrEqual(MODELS.length * REQUESTS);
    expect(job.memory.ephemeralPeakBytes + job.memory.persistentBytes).toBeGreaterThan(0);
    expect(service.log()).not.toMatch(/internal error|malformed command/i);
  });
});

describe('node flags of salus run', () => {
  it('reach the job, on the service and locally (debugger flags stay behind)', async () => {
    const job = join(service.dir, 'flags.js');
    writeFileSync(job, 'console.log(JSON.stringify({ execArgv: process.execArgv }));\n');
    const flags = ['--liftoff-only', '--stack-size=900', '--inspect-port=0'];
    for (const where of [['--name', 'flags'], ['--local']]) {
      const run = await service.startJob([job, ...where], {}, flags).done;
      expect(run.code, run.stderr).toBe(0);
      const { execArgv } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { execArgv: string[] };
      expect(execArgv, where[0]).toEqual(expect.arrayContaining(['--liftoff-only', '--stack-size=900']));
      expect(execArgv, where[0]).not.toContain('--inspect-port=0');
    }
  });
});
