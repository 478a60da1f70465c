/**
 * A hyper-parameter sweep (the Salus paper's second experiment: N identical
 * jobs): the copies one after another, each alone on the service (the next
 * starts when the previous exits), against all at once (PACK gives each a lane
 * while they fit), on one fresh `salus serve`, alternating which side goes first.
 * Makespan two ways: wall (first `salus run` spawned to last exited, so Node's
 * start of every job counts, as TF's session start counted in the paper) and
 * service (submittedAt to finishedAt: summed over the copies one at a time, first
 * submit to last finish all at once). Throughput = total iterations / makespan.
 * bench/evaluation/sweep.ts (E2, E6.E2) runs it on the zoo's TF.js jobs.
 */
import { cpus } from 'node:os';
import { machineCpuBusyMs, nowMs, startService, type BenchService, type SalusRun } from './harness.js';
import { secs } from './report.js';
import { gpuOf, jobsOf, startSampler, type Sample } from './sampler.js';
import { mean, median, ratio, round } from './stats.js';
import type { GpuInfo, JobInfo } from '../core/protocol/state.js';

/** A sweep: how many copies, of how many iterations each, and how one copy is started. */
export interface SweepSpec {
  jobs: number;
  iterations: number;
  label: string;
  /** Starts the copy `name` on `service`; resolves when it has exited 0. */
  start(service: BenchService, name: string): Promise<SalusRun>;
  /** How often the service's state is sampled (default once a second). */
  sampleEveryMs?: number;
}

/** One side of a sweep: its makespans, throughputs, and what the service showed meanwhile. */
export interface ModeOutcome {
  mode: 'sequential' | 'packed';
  wallMakespanMs: number;
  serviceMakespanMs: number;
  iterations: number;
  wallThroughput: number;
  serviceThroughput: number;
  medianIterationMs: number;
  meanBusyShare: number | null;
  /** The machine's cores in use on average over the mode (all processes; harness.ts machineCpuBusyMs). */
  coresBusy: number;
  maxLanes: number;
  maxRunning: number;
  jobs: Pick<JobInfo, 'name' | 'submittedAt' | 'startedAt' | 'finishedAt' | 'avgIterationMs' | 'lane'>[];
  samples: Sample[];
}

/**
 * One side of a sweep on `service`: the copies one after another (each alone, the next
 * spawned when the previous exits) or all at once; makespans wall (first spawn to last
 * exit) and service (submittedAt to finishedAt, summed one at a time).
 */
export async function runMode(service: BenchService, mode: 'sequential' | 'packed', options: SweepSpec, rep: number): Promise<ModeOutcome> {
  const names = Array.from({ length: options.jobs }, (_, i) => `sweep-${options.label}-${rep}-${mode}-${i}`);
  // The lane map after each alone-job is gone from the service; sample during the mode only.
  const sampler = startSampler(service, options.sampleEveryMs);
  const t0 = nowMs();
  const cpu0 = machineCpuBusyMs();
  if (mode === 'sequential') {
    for (const name of names) await options.start(service, name);
  } else {
    await Promise.all(names.map((name) => options.start(service, name)));
  }
  const wallMakespanMs = nowMs() - t0;
  const coresBusy = (machineCpuBusyMs() - cpu0) / wallMakespanMs;
  const samples = await sampler.stop();
  const infos = (await jobsOf(service)).filter((info) => names.includes(info.name));
  if (infos.length !== names.length || infos.some((info) => info.state !== 'done' || info.finishedAt === null)) {
    throw new Error(`bench sweep: ${mode} jobs did not all finish: ${JSON.stringify(infos.map((i) => [i.name, i.state, i.error]))}`);
  }
  const serviceMakespanMs = mode === 'sequential'
    ? infos.reduce((sum, info) => sum + (info.finishedAt! - info.submittedAt), 0)
    : Math.max(...infos.map((info) => info.finishedAt!)) - Math.min(...infos.map((info) => info.submittedAt));
  const iterations = options.jobs * options.iterations;
  const busy = samples.map((s) => s.busyShare);
  return {
    mode,
    wallMakespanMs: round(wallMakespanMs, 1),
    serviceMakespanMs: round(serviceMakespanMs, 1),
    iterations,
    wallThroughput: round(iterations / (wallMakespanMs / 1000), 1),
    serviceThroughput: round(iterations / (serviceMakespanMs / 1000), 1),
    medianIterationMs: round(median(infos.flatMap((info) => (info.avgIterationMs === null ? [] : [info.avgIterationMs])))),
    meanBusyShare: busy.length ? round(mean(busy)) : null,
    coresBusy: round(coresBusy, 2),
    maxLanes: Math.max(0, ...samples.map((s) => s.lanes)),
    maxRunning: Math.max(0, ...samples.map((s) => s.running)),
    jobs: infos.map(({ name, submittedAt, startedAt, finishedAt, avgIterationMs, lane }) => ({ name, submittedAt, startedAt, finishedAt, avgIterationMs, lane })),
    samples,
  };
}

export interface RepOutcome {
  sequential: ModeOutcome;
  packed: ModeOutcome;
  wallRatio: number | null;
  serviceRatio: number | null;
}

/** A mode's figures averaged over reps (throughput from the mean makespan). */
export type ModeMean = Pick<ModeOutcome,
  'wallMakespanMs' | 'serviceMakespanMs' | 'wallThroughput' | 'serviceThroughput' | 'medianIterationMs' | 'meanBusyShare' | 'coresBusy' | 'maxLanes'>;

function meanOf(modes: readonly ModeOutcome[]): ModeMean {
  const wall = mean(modes.map((m) => m.wallMakespanMs));
  const service = mean(modes.map((m) => m.serviceMakespanMs));
  const busy = modes.flatMap((m) => (m.meanBusyShare === null ? [] : [m.meanBusyShare]));
  return {
    wallMakespanMs: round(wall, 1),
    serviceMakespanMs: round(service, 1),
    wallThroughput: round(modes[0].iterations / (wall / 1000), 1),
    serviceThroughput: round(modes[0].iterations / (service / 1000), 1),
    medianIterationMs: round(mean(modes.map((m) => m.medianIterationMs)), 2),
    meanBusyShare: busy.length ? round(mean(busy)) : null,
    coresBusy: round(mean(modes.map((m) => m.coresBusy)), 2),
    maxLanes: Math.max(...modes.map((m) => m.maxLanes)),
  };
}

/** Both sides of a sweep, `reps` times, alternating which goes first; means and ratios (one at a time / all at once). */
export interface SweepOutcome {
  sequential: ModeMean;
  packed: ModeMean;
  /** Ratio of mean makespans (= ratio of throughputs). */
  wallRatio: number | null;
  serviceRatio: number | null;
  reps: RepOutcome[];
}

/**
 * Runs `spec` one at a time and all at once on one fresh `salus serve SERVE_ARGS`, `reps` times each, alternating,
 * after one untimed copy: the service keeps a job's compiled pipelines for later jobs (core/executor/pipelinePool.ts),
 * so without it the side that went first would pay the only compile.
 */
export async function runSweep(spec: SweepSpec, reps: number, serveArgs: readonly string[], log: (line: string) => void): Promise<SweepOutcome & { gpu: GpuInfo | null }> {
  const service = await startService(serveArgs);
  try {
    const gpu = await gpuOf(service);
    await spec.start(service, `sweep-${spec.label}-untimed`);
    const outcomes: RepOutcome[] = [];
    for (let rep = 0; rep < reps; rep++) {
      // Alternate which side goes first, so a drift in the machine's load does not favour one.
      const order: ('sequential' | 'packed')[] = rep % 2 === 0 ? ['sequential', 'packed'] : ['packed', 'sequential'];
      const got: Partial<Record<'sequential' | 'packed', ModeOutcome>> = {};
      for (const mode of order) {
        got[mode] = await runMode(service, mode, spec, rep);
        log(`sweep ${spec.label} rep ${rep + 1}: ${mode === 'sequential' ? 'one at a time' : 'all at once'}: ${secs(got[mode]!.wallMakespanMs)}, ${got[mode]!.coresBusy.toFixed(2)} of ${cpus().length} cores busy`);
      }
      const { sequential, packed } = got as Record<'sequential' | 'packed', ModeOutcome>;
      outcomes.push({
        sequential, packed,
        wallRatio: ratio(sequential.wallMakespanMs, packed.wallMakespanMs),
        serviceRatio: ratio(sequential.serviceMakespanMs, packed.serviceMakespanMs),
      });
    }
    const sequential = meanOf(outcomes.map((r) => r.sequential));
    const packed = meanOf(outcomes.map((r) => r.packed));
    return {
      gpu, sequential, packed, reps: outcomes,
      wallRatio: ratio(sequential.wallMakespanMs, packed.wallMakespanMs),
      serviceRatio: ratio(sequential.serviceMakespanMs, packed.serviceMakespanMs),
    };
  } finally {
    await service.stop();
  }
}
