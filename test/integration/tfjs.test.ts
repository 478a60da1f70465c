/**
 * The proof of the remote WebGPU is other people's code: TensorFlow.js's WebGPU
 * backend trains the example MLP unmodified under `salus run` and prints the
 * very numbers it prints on a local device (`salus run --local`), every logged
 * step and the final loss and checksum, bit for bit.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startService, type RunResult, type TestService } from '../helpers/service.js';

const JOB = join(ROOT, 'assets/jobs/tfjs-train.js');
const ITERATIONS = 30;
const JOB_ARGS = ['--', '--iterations', String(ITERATIONS), '--batch', '64', '--log-every', '5'];

let service: TestService;
let local: RunResult;
let remote: RunResult;

/** The JSON lines a run printed (TF.js may add other output; only the job's lines count). */
function lines(run: RunResult, where: string): Array<{ step?: number; loss?: number; final?: { loss: number; checksum: number } }> {
  if (run.code !== 0) throw new Error(`tfjs-train failed ${where} (exit ${run.code}):\n${run.stdout}\n${run.stderr.slice(-4000)}`);
  return run.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

beforeAll(async () => {
  service = await startService();
  [local, remote] = await Promise.all([
    service.startJob([JOB, '--local', ...JOB_ARGS]).done,
    service.startJob([JOB, '--name', 'tfjs', '--iterations', String(ITERATIONS), ...JOB_ARGS]).done,
  ]);
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

describe('TensorFlow.js (WebGPU backend) through salus run', () => {
  it('prints the same losses and the same final line as on a local device', () => {
    const localLines = lines(local, 'on the local device');
    const remoteLines = lines(remote, 'through salus run');
    const final = (all: typeof localLines) => all.find((l) => l.final)?.final;

    expect(final(localLines)).toBeDefined();
    expect(final(remoteLines)).toEqual(final(localLines));
    expect(remoteLines).toEqual(localLines);
    // It did train: the loss fell.
    expect(final(localLines)!.loss).toBeLessThan(0.5 * localLines[0].loss!);
  });

  it('ran as a job of the service, which saw it finish', async () => {
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'tfjs' && j.finishedAt));
    expect(job.state).toBe('done');
    expect(job.iterations.done).toBeGreaterThanOrEqual(ITERATIONS);
    expect(service.log()).not.toMatch(/internal error|malformed command/i);
  });
});
