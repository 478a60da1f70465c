/**
 * The workload zoo (assets/jobs: tfjs-cnn.js, tfjs-rnn.js, ort-serve.js) runs
 * unchanged on a local device (`salus run --local`) and through the service,
 * and prints the same numbers both ways: every logged loss and the final
 * checksum of the TF.js trainers, every answered request's checksum of the ORT
 * server. Through the service each job declares its iterations (setHints) and
 * marks them (salus.iteration), so the service knows the total and counts at
 * least that many (it counts unmarked work between sync points too). Small
 * sizes and few iterations: all six runs go side by side.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startService, type RunResult, type TestService } from '../helpers/service.js';

interface Workload {
  name: string;
  file: string;
  args: string[];
  /** Iterations the job declares and marks. */
  iterations: number;
  nodeFlags: string[];
}

const WORKLOADS: Workload[] = [
  { name: 'tfjs-cnn', file: 'tfjs-cnn.js', args: ['--size', 'small', '--iterations', '6', '--log-every', '1'], iterations: 6, nodeFlags: [] },
  { name: 'tfjs-rnn', file: 'tfjs-rnn.js', args: ['--size', 'small', '--iterations', '6', '--log-every', '1'], iterations: 6, nodeFlags: [] },
  // 5 requests + the warm-up; --liftoff-only spares V8 half a minute on ORT's wasm.
  { name: 'ort-serve', file: 'ort-serve.js', args: ['--size', 'small', '--rate', '50', '--requests', '5'], iterations: 6, nodeFlags: ['--liftoff-only'] },
];

let service: TestService;
const runs = new Map<string, { local: RunResult; remote: RunResult }>();

/** The job's JSON lines, less what depends on timing (ORT's latencies and warm-up). */
function numbers(run: RunResult, where: string): Record<string, unknown>[] {
  if (run.code !== 0) throw new Error(`${where} failed (exit ${run.code}):\n${run.stdout}\n${run.stderr.slice(-4000)}`);
  return run.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>)
    .filter((line) => !('warmupMs' in line))
    .map((line) => ('request' in line ? { request: line.request, checksum: line.checksum }
      : 'final' in line && 'requests' in line.final ? { final: { requests: line.final.requests, checksum: line.final.checksum } } : line));
}

beforeAll(async () => {
  service = await startService();
  await Promise.all(WORKLOADS.map(async (w) => {
    const file = join(ROOT, 'assets/jobs', w.file);
    const [local, remote] = await Promise.all([
      service.startJob([file, '--local', '--', ...w.args], {}, w.nodeFlags).done,
      service.startJob([file, '--name', w.name, '--', ...w.args], {}, w.nodeFlags).done,
    ]);
    runs.set(w.name, { local, remote });
  }));
}, 240_000);

afterAll(async () => {
  await service?.stop();
});

describe.each(WORKLOADS)('$name', (w) => {
  it('prints the same numbers through the service as on a local device', () => {
    const { local, remote } = runs.get(w.name)!;
    const localLines = numbers(local, `${w.name} --local`);
    const remoteLines = numbers(remote, `${w.name} via salus`);
    const final = localLines.find((l) => 'final' in l)?.final as { checksum: number } | undefined;
    expect(final, 'a final line').toBeDefined();
    expect(Number.isFinite(final!.checksum)).toBe(true);
    expect(localLines.length).toBeGreaterThan(w.iterations - 1);
    expect(remoteLines).toEqual(localLines);
  });

  it('ran as a job that declared and marked its iterations', async () => {
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === w.name && j.finishedAt));
    expect(job.state).toBe('done');
    expect(job.iterations.total).toBe(w.iterations);
    // Work between marked iterations (the final read-back) is scheduled, but is not an iteration. Work before the
    // first mark (ORT's model load) is inferred as iterations: the service cannot yet know the job will mark them.
    expect(job.iterations.done).toBeGreaterThanOrEqual(w.iterations);
    expect(job.iterations.done).toBeLessThanOrEqual(w.iterations + 1);
  });
});
