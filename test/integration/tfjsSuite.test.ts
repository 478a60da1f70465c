/**
 * TensorFlow.js's own jasmine specs as a conformance test of the remote WebGPU
 * (a slice of `npm run test:tfjs-suite`, which runs all of them): the test
 * files of a few op families — matmul, convolutions, reductions, elementwise
 * arithmetic, softmax — run on TF.js's WebGPU backend on a local device and
 * through a real `salus serve`. TF.js re-creates its backend (a new adapter
 * and device) for every test file, so the slice also covers many devices per
 * job. No spec may pass locally and fail through the service.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareSuiteRuns, readSuiteRun, type SuiteRun } from '../../conformance/tfjs/compare.js';
import { ROOT, startService, type RunResult, type TestService } from '../helpers/service.js';

const JOB = join(ROOT, 'conformance/tfjs/job.js');
/** Test files of tfjs-core's dist/tests.js (globs): one or two per op family. */
const SLICE = [
  'ops/mat_mul_test', 'ops/fused/fused_mat_mul_test', 'ops/conv2d_test', 'ops/max_pool_test', 'ops/sum_test',
  'ops/arithmetic_test', 'ops/softmax_test', 'ops/transpose_test',
];
/** The slice passes 314 specs locally (tfjs-core 4.22.0); far fewer means it did not really run. */
const MIN_SPECS = 300;

let service: TestService;
let dir: string;
let local: SuiteRun;
let remote: SuiteRun;
let runs: { local: RunResult; remote: RunResult };

beforeAll(async () => {
  service = await startService();
  dir = mkdtempSync(join(tmpdir(), 'salus-tfjs-slice-'));
  // A generous spec timeout: on 2 loaded cores a slow spec must not read as a difference.
  const args = (out: string) => ['--', '--files', SLICE.join(','), '--spec-timeout-ms', '60000', '--out', join(dir, out)];
  // Side by side: the local run's GPU work is in its own process, the remote one's in the service.
  const [localRun, remoteRun] = await Promise.all([
    service.startJob([JOB, '--local', ...args('local.jsonl')]).done,
    service.startJob([JOB, '--name', 'tfjs-slice', ...args('remote.jsonl')]).done,
  ]);
  runs = { local: localRun, remote: remoteRun };
  local = readSuiteRun(join(dir, 'local.jsonl'));
  remote = readSuiteRun(join(dir, 'remote.jsonl'));
  console.log(`tfjs slice: local ${JSON.stringify(local.counts)} in ${local.durationMs} ms, remote ${JSON.stringify(remote.counts)} in ${remote.durationMs} ms`);
}, 240_000);

afterAll(async () => {
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("TensorFlow.js's own specs, local vs through the service", () => {
  it('ran the whole slice on both sides', () => {
    expect(runs.local.code, runs.local.stderr.slice(-3000)).toBe(0);
    expect(runs.remote.code, `${runs.remote.stderr.slice(-3000)}\n--- service\n${service.log().slice(-3000)}`).toBe(0);
    expect(local.complete && remote.complete).toBe(true);
    expect(local.counts.passed).toBeGreaterThanOrEqual(MIN_SPECS);
    expect(remote.specs.size).toBe(local.specs.size);
  });

  it('has no spec that passes locally but not through the service', () => {
    const { regressions } = compareSuiteRuns(local, remote);
    expect(regressions.map((d) => `${d.name}: ${d.remote} (${d.remoteMessage ?? ''})`)).toEqual([]);
  });

  it('created the backend on a fresh device for every test file, as one job', async () => {
    expect(remote.suiteErrors).toEqual([]);
    expect(remote.adaptersRequested).toBeGreaterThanOrEqual(SLICE.length);
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'tfjs-slice' && j.finishedAt));
    expect(job.state).toBe('done');
    expect(service.log()).not.toMatch(/internal error|malformed command/i);
  });
});
