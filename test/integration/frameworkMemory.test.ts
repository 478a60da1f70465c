/**
 * Memory sharing for frameworks that pool their buffers (issue 8): `salus run`'s
 * TF.js adapter reports each buffer the framework puts back in its pool, the
 * service lends that memory to others until the buffer's next use, and the job
 * never notices: a bind group made before still works, a buffer coming back
 * holds zeros, a discard that a recorded copy would contradict is ignored.
 * Three unmodified TF.js trainers whose pools together pass capacity run side
 * by side with their local results, and the state the service measures for
 * each is its weights and Adam state (within 1.5×), not its pool. ONNX Runtime
 * Web servers run with their EP's buffer caches released after each run, so two
 * fit where their caches alone would not.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, lastJson, serviceForAllTests, type RunResult } from '../helpers/service.js';

const POOLED = join(ROOT, 'test/fixtures/jobs/pooledBuffers.js');
const BIG_BYTES = 4 * 1024 * 1024;
const service = serviceForAllTests(['--memory', '12MiB', '--policy', 'FAIR']);

/**
 * Runs the pooled-buffer job `name` and reads its persistent bytes from the memory map at each of its
 * pauses: while its 4 MiB buffer is in use, and after its pool took the buffer back (the job waits for
 * the test at each, so nothing races).
 */
async function persistentAtPauses(name: string, extraArgs: string[] = []): Promise<{ run: RunResult; inUse: number; released: number }> {
  const pauseDir = mkdtempSync(join(tmpdir(), 'salus-pooled-'));
  const job = service.startJob(['--name', name, ...extraArgs, POOLED, '--', '--gate', pauseDir]);
  const control = await service.control();
  const seen: Record<string, number> = {};
  try {
    for (const phase of ['in-use', 'released']) {
      await waitFor(() => job.stdout().includes(`{"phase":"${phase}"}`) || job.child.exitCode !== null, 30_000);
      const id = (await control.call<any[]>('jobs')).find((j) => j.name === name)?.id;
      const entry = (await control.call<any>('memory')).jobs.find((j: any) => j.id === id);
      seen[phase] = entry?.persistentBytes ?? -1;
      writeFileSync(join(pauseDir, phase), '');
    }
    return { run: await job.done, inUse: seen['in-use'], released: seen.released };
  } finally {
    rmSync(pauseDir, { recursive: true, force: true });
  }
}

/** Resolves once `condition` holds (checked every 10 ms), or throws after `timeoutMs`. */
async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('discarded contents of pooled buffers', () => {
  it('gives a released pooled buffer back and brings it back zeroed, its bind groups working', async () => {
    const { run, inUse, released } = await persistentAtPauses('pooled');
    expect(run.code, run.stderr).toBe(0);
    const result = lastJson(run.stdout);
    expect(result).toMatchObject({
      same: true, before: [2, 4, 6, 8], zeros: [0, 0, 0, 0], doubled: [20, 40, 60, 80], kept: [10, 20, 30, 40],
    });
    // Brought back three times, the buffer is still named once by the job's label (it once grew a prefix per return).
    expect(result.named).toMatch(/'job-\d+: cycled( \(lane-\d+\))?'/);
    expect(result.named.match(/cycled/g)).toHaveLength(1);
    expect(run.stdout).not.toMatch(/uncaptured/);
    // Held while in use; while the pool keeps it, the service holds only the job's two 16-byte buffers.
    expect(inUse).toBeGreaterThanOrEqual(BIG_BYTES);
    expect(released).toBeGreaterThanOrEqual(0);
    expect(released).toBeLessThan(1024);
    expect(await service.json<any>(['memory'])).toMatchObject({ usedBytes: 0, jobs: [] });
  }, 60_000);

  it('keeps the pooled buffer as the job\'s memory with --no-adapters', async () => {
    const { run, inUse, released } = await persistentAtPauses('pooled-plain', ['--no-adapters']);
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({ same: true, doubled: [20, 40, 60, 80], kept: [10, 20, 30, 40] });
    expect(inUse).toBeGreaterThanOrEqual(BIG_BYTES);
    expect(released).toBeGreaterThanOrEqual(BIG_BYTES);
  }, 60_000);
});

describe('admission from what an earlier run measured', () => {
  it('sizes the lane of a job that declares nothing for its program\'s last clean run\'s largest iteration', async () => {
    const TFJS = join(ROOT, 'assets/jobs/tfjs-train.js');
    const args = ['--', '--iterations', '2', '--batch', '512', '--hidden', '64', '--log-every', '1'];
    const first = await service.startJob(['--name', 'measured-1', TFJS, ...args]).done;
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    const [measured] = await service.waitForJobs((all) => {
      const ours = all.filter((j) => j.name === 'measured-1' && j.finishedAt);
      return ours.length === 1 && ours;
    });
    expect(measured.memory.ephemeralPeakBytes).toBeGreaterThan(256 * 1024);
    // Again, declaring nothing: its lane has room for an iteration as soon as it is admitted, before TF.js has run one.
    const second = service.startJob(['--name', 'measured-2', TFJS, ...args]);
    const control = await service.control();
    let lane: any;
    while (!lane) {
      const job = (await control.call<any[]>('jobs')).find((j) => j.name === 'measured-2' && j.lane);
      if (job) lane = (await control.call<any>('memory')).lanes.find((l: any) => l.id === job.lane);
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(lane.sizeBytes).toBeGreaterThanOrEqual(measured.memory.ephemeralPeakBytes);
    expect((await second.done).code).toBe(0);
    expect(service.log()).toMatch(new RegExp(`job-\\d+ declares no memory; ${measured.id} \\(run \\d+\\) ran it and measured`));
  }, 90_000);
});

describe('TF.js trainers whose pools together pass capacity', () => {
  it('run side by side with local results, each measured at its weights and optimizer state', async () => {
    const TFJS = join(ROOT, 'assets/jobs/tfjs-train.js');
    const [inputs, hidden, batch] = [8, 256, 1024]; // tfjs-train.js's MLP: 8 -> hidden -> 1
    const args = ['--', '--iterations', '3', '--batch', String(batch), '--hidden', String(hidden), '--log-every', '1'];
    // Weights and Adam's two moments of each: what must stay between steps.
    const stateBytes = 3 * 4 * (inputs * hidden + hidden + hidden + 1);
    // The local reference runs alongside (its own device): only the CPU is shared.
    const [local, ...results] = await Promise.all([
      service.startJob(['--local', TFJS, ...args]).done,
      ...['tf-a', 'tf-b', 'tf-c'].map((name) => service.startJob(['--name', name, TFJS, ...args]).done),
    ]);
    expect(local.code, local.stderr.slice(-2000)).toBe(0);
    const lines = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('{'));
    for (const run of results) {
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(lines(run.stdout)).toEqual(lines(local.stdout));
    }
    const jobs = await service.waitForJobs((all) => {
      const ours = all.filter((j) => j.name.startsWith('tf-'));
      return ours.length === 3 && ours.every((j) => j.finishedAt) && ours;
    });
    for (const job of jobs) {
      expect(job).toMatchObject({ state: 'done', gpuErrors: { count: 0, first: null } });
      // Each pool is ~8.6 MiB: three would not fit in 12 MiB as model state.
      expect(job.memory.ephemeralPeakBytes).toBeGreaterThan(8 * 1024 * 1024);
      expect(job.memory.stateBytes).toBeGreaterThan(stateBytes / 1.5);
      expect(job.memory.stateBytes).toBeLessThan(stateBytes * 1.5);
    }
    expect(service.log()).not.toMatch(/uncaptured GPU error|internal error|waits for GPU memory/);
    expect(await service.json<any>(['memory'])).toMatchObject({ usedBytes: 0, jobs: [], lanes: [] });
  }, 300_000);
});

describe('ONNX Runtime Web servers with their buffer caches released', () => {
  const ORT = join(ROOT, 'assets/jobs/ort-serve.js');
  const args = ['--', '--size', 'large', '--rate', '0', '--requests', '4'];
  const flags = ['--liftoff-only'];
  const finalOf = (stdout: string) => lastJson(stdout).final;

  it('keeps each server\'s state at its model, not its caches, and answers as locally', async () => {
    const [local, a, b, plain] = await Promise.all([
      service.startJob(['--local', ORT, ...args], {}, flags).done,
      service.startJob(['--name', 'ort-a', ORT, ...args], {}, flags).done,
      service.startJob(['--name', 'ort-b', ORT, ...args], {}, flags).done,
      service.startJob(['--name', 'ort-plain', '--no-adapters', ORT, ...args], {}, flags).done,
    ]);
    expect(local.code, local.stderr.slice(-2000)).toBe(0);
    for (const run of [a, b, plain]) {
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(finalOf(run.stdout).checksum).toBe(finalOf(local.stdout).checksum);
    }
    const jobs = await service.waitForJobs((all) => {
      const ours = all.filter((j) => j.name.startsWith('ort-'));
      return ours.length === 3 && ours.every((j) => j.finishedAt) && ours;
    });
    const state = (name: string) => jobs.find((j) => j.name === name).memory.stateBytes;
    for (const job of jobs) expect(job).toMatchObject({ state: 'done', gpuErrors: { count: 0, first: null } });
    // The conv net's weights are a few KiB; ORT's caches, kept without the adapter, are several times its state.
    expect(state('ort-a')).toBeLessThan(64 * 1024);
    expect(state('ort-b')).toBeLessThan(64 * 1024);
    expect(state('ort-plain')).toBeGreaterThan(2 * state('ort-a'));
    expect(await service.json<any>(['memory'])).toMatchObject({ usedBytes: 0, jobs: [], lanes: [] });
  }, 180_000);
});
