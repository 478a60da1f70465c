/**
 * One service, two GPUs (issue 22): two software GPUs made by bench/twinGpu.ts, 64 MiB each. Two
 * 40 MiB jobs run side by side, one on each, with a local run's results; the memory map lists both; a pinned
 * job stays on its GPU (and waits there though the other has room); killing a job returns its bytes on its
 * GPU; a job too big for every GPU is refused naming the largest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { lastJson, ROOT, startService, type TestService } from '../helpers/service.js';
import { parsePrometheusText } from '../helpers/prometheusText.js';
import { until } from '../helpers/rawSocket.js';
import { makeTwinSwiftShader, type TwinGpus } from '../../bench/twinGpu.js';
import type { JobInfo, MemoryMap, ServiceSnapshot } from '../../core/protocol/state.js';

const STEPS = join(ROOT, 'test/fixtures/jobs/steps.js');
const MiB = 1024 * 1024;
const twin = makeTwinSwiftShader();
const skip = 'reason' in twin ? twin.reason : null;

let service: TestService;
let gpus: TwinGpus;

/** A job holding 40 MiB of weights (declared, so admission knows before it allocates), `iterations` long. */
function bigJob(name: string, iterations: number, extra: string[] = []): string[] {
  return ['--name', name, '--persistent', '40MiB', '--ephemeral', '64KiB', '--iterations', String(iterations), ...extra,
    STEPS, '--', '--iterations', String(iterations), '--persistent', String(40 * MiB), '--work', '16', '--busy-ms', '20'];
}

const byName = (jobs: JobInfo[], name: string) => jobs.find((job) => job.name === name);

describe.skipIf(skip !== null)('one service on two GPUs', () => {
  beforeAll(async () => {
    gpus = twin as TwinGpus;
    service = await startService(['--gpus', 'all', '--memory', '64MiB', '--http', '127.0.0.1:0'], gpus.env);
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    gpus?.remove();
  });

  it('lists both GPUs in the memory map, each with its own 64 MiB, the sums at the top', async () => {
    const memory = await service.json<MemoryMap>(['memory']);
    expect(memory.gpus?.map((gpu) => [gpu.id, gpu.capacityBytes, gpu.usedBytes])).toEqual([['gpu0', 64 * MiB, 0], ['gpu1', 64 * MiB, 0]]);
    expect(memory.gpus?.map((gpu) => gpu.name).sort()).toEqual([...gpus.names].sort());
    expect(memory.capacityBytes).toBe(128 * MiB);
    const text = await service.cli(['memory']);
    expect(text.stdout).toContain('gpu0');
    expect(text.stdout).toContain('gpu1');
    expect(service.log()).toMatch(/GPU gpu0: .*; gpu1: /);
  });

  it('runs two 40 MiB jobs side by side, one on each GPU, with the results of a local run', async () => {
    const a = service.startJob(bigJob('a', 60));
    const b = service.startJob(bigJob('b', 60));
    // One snapshot that shows both iterating at once, each holding its 40 MiB on its own GPU.
    const control = await service.control();
    let snapshot: ServiceSnapshot | null = null;
    for (const deadline = Date.now() + 60_000; !snapshot && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const seen = await control.call<ServiceSnapshot>('snapshot');
      const [ja, jb] = [byName(seen.jobs, 'a'), byName(seen.jobs, 'b')];
      if (ja?.state === 'running' && jb?.state === 'running' && ja.iterations.done > 0 && jb.iterations.done > 0) snapshot = seen;
    }
    expect(snapshot, 'a and b never ran at once').not.toBeNull();
    const together = [byName(snapshot!.jobs, 'a')!, byName(snapshot!.jobs, 'b')!];
    expect(together.map((job) => job.gpu).sort()).toEqual(['gpu0', 'gpu1']);
    for (const gpu of snapshot!.memory.gpus!) expect(gpu.usedBytes).toBeGreaterThanOrEqual(40 * MiB);
    // /metrics: each GPU's memory under its gpu label, and each job under the GPU it runs on.
    const url = new URL((await until(() => /salus: panel at (\S+)/.exec(service.log()), 'the panel URL'))[1]);
    const families = parsePrometheusText(await (await fetch(new URL(`/metrics?token=${url.searchParams.get('token')}`, url))).text());
    const used = families.get('salus_gpu_memory_used_bytes')!.samples;
    expect(used.map((sample) => sample.labels.gpu).sort()).toEqual(['0', '1']);
    // Read while both still run (60 steps of at least 20 ms each).
    for (const sample of used) expect(sample.value).toBeGreaterThanOrEqual(40 * MiB);
    expect(families.get('salus_gpu_busy_ratio')!.samples.map((sample) => sample.labels.gpu).sort()).toEqual(['0', '1']);
    const persistent = families.get('salus_job_memory_persistent_bytes')!.samples;
    for (const job of together) expect(persistent.find((sample) => sample.labels.job === job.id)?.labels.gpu).toBe(job.gpu!.slice(3));
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const local = await service.cli(['run', '--local', STEPS, '--', '--iterations', '60', '--persistent', String(40 * MiB), '--work', '16']);
    expect(local.code, local.stderr).toBe(0);
    expect(lastJson(ra.stdout).checksum).toBe(lastJson(local.stdout).checksum);
    expect(lastJson(rb.stdout).checksum).toBe(lastJson(local.stdout).checksum);
    const jobs = await service.json<JobInfo[]>(['jobs']);
    expect(jobs.filter((job) => ['a', 'b'].includes(job.name)).map((job) => job.gpu).sort()).toEqual(['gpu0', 'gpu1']);
    // The job table's text has a GPU column once a job ran past gpu0.
    const table = (await service.cli(['jobs'])).stdout.split('\n');
    expect(table[0]).toMatch(/\bGPU\s+LANE\b/);
    expect(table.find((line) => /\bb\b/.test(line) && line.includes('done'))).toMatch(/gpu[01]\s+-/);
  }, 120_000);

  it('keeps a pinned job on its GPU, and a kill returns its bytes there', async () => {
    const first = service.startJob(bigJob('pinned-1', 100_000, ['--gpu', '1']));
    await service.waitForJobs((jobs) => byName(jobs, 'pinned-1')?.state === 'running');
    // The second fits on gpu0, which is empty, but is pinned to gpu1: it waits there.
    const second = service.startJob(bigJob('pinned-2', 100_000, ['--gpu', 'gpu1']));
    await service.waitForJobs((jobs) => byName(jobs, 'pinned-2')?.state === 'queued');
    let memory = await service.json<MemoryMap>(['memory']);
    expect(memory.gpus!.map((gpu) => gpu.jobs.length)).toEqual([0, 1]);
    expect(memory.gpus![1].usedBytes).toBeGreaterThanOrEqual(40 * MiB);
    const jobs = await service.json<JobInfo[]>(['jobs']);
    expect(byName(jobs, 'pinned-1')?.gpu).toBe('gpu1');
    expect(byName(jobs, 'pinned-2')?.gpu ?? null).toBeNull();

    // Killing the first returns its bytes on gpu1 at once: the second is admitted there, and nothing went to gpu0.
    expect((await service.cli(['kill', byName(jobs, 'pinned-1')!.id])).code).toBe(0);
    const moved = await service.waitForJobs((all) => byName(all, 'pinned-2')?.state === 'running' && byName(all, 'pinned-2'));
    expect(moved.gpu).toBe('gpu1');
    memory = await service.json<MemoryMap>(['memory']);
    expect(memory.gpus!.map((gpu) => gpu.jobs.map((job) => job.id))).toEqual([[], [moved.id]]);
    expect((await service.cli(['kill', moved.id])).code).toBe(0);
    await service.waitForJobs((all) => byName(all, 'pinned-2')?.state === 'killed');
    memory = await service.json<MemoryMap>(['memory']);
    expect(memory.gpus!.map((gpu) => gpu.usedBytes)).toEqual([0, 0]);
    await Promise.all([first.done, second.done]);
  }, 120_000);

  it('refuses a job too big for every GPU, naming the largest, and a pin to a GPU that is not there', async () => {
    const huge = await service.cli(['run', '--name', 'huge', '--persistent', '100MiB', STEPS, '--', '--iterations', '1']);
    expect(huge.code).not.toBe(0);
    expect(huge.stderr).toMatch(/the largest GPU, gpu0, of 64 MiB/);
    const nowhere = await service.cli(['run', '--gpu', '7', STEPS, '--', '--iterations', '1']);
    expect(nowhere.code).not.toBe(0);
    expect(nowhere.stderr).toContain("no GPU 'gpu7' here; the GPUs are gpu0, gpu1");
  }, 60_000);
});
