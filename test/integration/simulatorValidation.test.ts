/**
 * The simulator against the real thing: a small trace of training jobs runs on a
 * real `salus serve` (SRTF, then FIFO; and three like jobs under PACK, each in its
 * own lane, as in the paper's sweep), then through `simulate` with each job's
 * measured iteration time (the service's GPU time per iteration) and measured CPU
 * gap between iterations. Average JCT and makespan must agree within 15%, and the
 * jobs finish in the same order under SRTF and FIFO: the queueing, the part the
 * simulator predicts, is not fed in.
 *
 * As in bench/traceRun.ts, every job is started and admitted before the trace, in
 * arrival order, and waits for its arrival time (a start file carries the trace's
 * start), so Node's start-up on a loaded machine stays out of the trace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulate } from '../../core/sim/simulator.js';
import type { TraceJob } from '../../core/sim/trace.js';
import type { JobInfo } from '../../core/protocol/state.js';
import { lastJson, ROOT, startService, type JobProcess, type TestService } from '../helpers/service.js';

const STEPS = join(ROOT, 'test', 'fixtures', 'jobs', 'steps.js');
const KiB = 1024;
const HINTS = ['--persistent', String(256 * KiB), '--ephemeral', String(256 * KiB)];
interface RealJob {
  name: string;
  iterations: number;
  arrivalMs: number;
}

/** A long job first, shorter ones arriving while it runs: SRTF reorders them, FIFO does not. */
const MIXED: RealJob[] = [
  { name: 'long', iterations: 30, arrivalMs: 0 },
  { name: 'short', iterations: 5, arrivalMs: 150 },
  { name: 'medium', iterations: 12, arrivalMs: 300 },
  { name: 'tiny', iterations: 3, arrivalMs: 450 },
];
/** Three jobs of one kind, side by side in three lanes. */
const SWEEP: RealJob[] = [0, 1, 2].map((i) => ({ name: `sweep-${i}`, iterations: 12, arrivalMs: 100 * i }));

let service: TestService | null = null;
let dir: string | null = null;
afterEach(async () => {
  await service?.stop();
  service = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Measured {
  avgJctMs: number;
  makespanMs: number;
  /** The trace for the simulator, with each job's measured iteration time and gap. */
  trace: TraceJob[];
  /** Names of the jobs in the order they finished. */
  finishOrder: string[];
}

/** Names in order of finish. */
const byFinish = (jobs: ReadonlyArray<{ name: string; finishMs: number }>) => [...jobs].sort((a, b) => a.finishMs - b.finishMs).map((job) => job.name);

async function runReal(policy: 'SRTF' | 'FIFO' | 'PACK', TRACE: readonly RealJob[]): Promise<Measured> {
  service = await startService(['--memory', '256MiB', '--policy', policy]);
  dir = mkdtempSync(join(tmpdir(), 'salus-sim-validation-'));
  const startFile = join(dir, 'start');
  const jobs: JobProcess[] = [];
  for (const job of TRACE) {
    jobs.push(service.startJob(['--name', job.name, '--iterations', String(job.iterations), ...HINTS, STEPS, '--',
      '--iterations', String(job.iterations), '--work', '96', '--sdk', '--quiet', ...HINTS, '--start-file', startFile, '--arrival-ms', String(job.arrivalMs)]));
    await service.waitForJobs((infos) => infos.some((info) => info.name === job.name && info.state === 'running'), 30_000);
  }
  await service.waitForJobs((infos) => TRACE.every((job) => infos.some((info) => info.name === job.name && info.memory.persistentBytes >= 256 * KiB)), 30_000);
  const t0 = Date.now() + 500;
  writeFileSync(`${startFile}.tmp`, String(t0));
  renameSync(`${startFile}.tmp`, startFile);
  const results = await Promise.all(jobs.map((job) => job.done));
  results.forEach((result, i) => expect(result.code, `${TRACE[i].name}: ${result.stderr}`).toBe(0));
  const infos = await service.json<JobInfo[]>(['jobs']);
  const trace: TraceJob[] = [];
  const jcts: number[] = [];
  let lastEndMs = 0;
  TRACE.forEach((job, i) => {
    const info = infos.find((candidate) => candidate.name === job.name)!;
    const out = lastJson(results[i].stdout);
    // From its first request (its arrival, give or take a timer's lateness, which is no part of scheduling).
    jcts.push(out.lastEnd - out.firstStart);
    lastEndMs = Math.max(lastEndMs, out.lastEnd);
    // The job's life from its first request to its last result: GPU time, waits for grants, and the rest (CPU
    // between iterations, round trips) spread over its iterations as the gap.
    const iterationMs = info.attainedMs / job.iterations;
    const gapMs = Math.max(0, (out.lastEnd - out.firstStart - info.attainedMs - info.queuedMs) / job.iterations);
    trace.push({ name: job.name, arrivalS: (out.firstStart - t0) / 1000, iterations: job.iterations, iterationMs, persistentBytes: 256 * KiB, ephemeralBytes: 256 * KiB, priority: 0, gapMs });
  });
  const finishOrder = byFinish(TRACE.map((job, i) => ({ name: job.name, finishMs: lastJson(results[i].stdout).lastEnd })));
  return { avgJctMs: jcts.reduce((a, b) => a + b, 0) / jcts.length, makespanMs: lastEndMs - t0, trace, finishOrder };
}

describe('the simulator against a real salus serve', () => {
  for (const [policy, trace] of [['SRTF', MIXED], ['FIFO', MIXED], ['PACK', SWEEP]] as const) {
    it(`predicts ${policy}'s average JCT and makespan within 15%`, async () => {
      const real = await runReal(policy, trace);
      const simulated = simulate(real.trace, { policy, capacityBytes: 256 * 1024 * KiB });
      expect(simulated.peakLanes).toBe(policy === 'PACK' ? 3 : 1);
      const detail = JSON.stringify({ real: { avgJctMs: real.avgJctMs, makespanMs: real.makespanMs }, simulated: { avgJctMs: simulated.avgJctMs, makespanMs: simulated.makespanMs }, trace: real.trace });
      // From the trace's start (virtual time 0), as the real one.
      const simulatedMakespanMs = Math.max(...simulated.jobs.map((job) => job.finishMs!));
      expect(Math.abs(simulated.avgJctMs! / real.avgJctMs - 1), detail).toBeLessThan(0.15);
      expect(Math.abs(simulatedMakespanMs / real.makespanMs - 1), detail).toBeLessThan(0.15);
      // SRTF orders the real jobs as the simulator does (FIFO's order is arrival order in both).
      if (policy !== 'PACK') expect(real.finishOrder, detail).toEqual(byFinish(simulated.jobs.map((job) => ({ name: job.name, finishMs: job.finishMs! }))));
    }, 60_000);
  }
});
