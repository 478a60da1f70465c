/**
 * Experiment 2 (paper: a hyper-parameter sweep of identical jobs has 2.38× the
 * throughput with PACK than one job at a time — with a small model, SuperRes;
 * ResNet50, which fills the GPU alone, gains little).
 *
 * Two variants, each on a fresh `salus serve --policy PACK`: "small" jobs whose
 * iteration is mostly round trips and a tiny kernel (the SuperRes case), and
 * "compute-heavy" jobs whose kernel dominates (the ResNet case). For each, N
 * identical training jobs (small persistent and ephemeral memory, a fixed number
 * of SDK iterations):
 * (a) one after another, each alone on the service (the next starts when the
 *     previous exits): "one job's time × N";
 * (b) all at once, PACK giving each its own lane while they fit.
 * Makespan two ways: wall (first `salus run` spawned to last exited, so Node's
 * start of every job counts, as TF's session start counted in the paper) and
 * service (from submittedAt to finishedAt: for (a) the sum over jobs, for (b) the
 * first submit to the last finish). Throughput = total iterations / makespan.
 * Both sides run `reps` times, alternating which goes first.
 */
import { expectSuccess, machineCpuBusyMs, nowMs, startService, type BenchService, type SalusRun } from '../harness.js';
import {
  gpuOf, jobsOf, KiB, mean, median, PAPER_JOBS_DIR, ratio, round, secs, startSampler, times, type PaperResult, type Sample,
} from './common.js';
import { join } from 'node:path';
import { cpus } from 'node:os';
import type { GpuInfo, JobInfo } from '../../core/protocol/state.js';

export interface SweepVariant {
  label: string;
  /** Kernel work per thread: sets how much of an iteration is compute. */
  work: number;
  iterations: number;
}

export interface SweepOptions {
  jobs: number;
  persistentBytes: number;
  ephemeralBytes: number;
  variants: SweepVariant[];
  /** Each variant's two sides this many times, alternating which goes first. */
  reps: number;
}

export const SWEEP_DEFAULTS: SweepOptions = {
  jobs: 8,
  persistentBytes: 256 * KiB,
  ephemeralBytes: 64 * KiB,
  variants: [{ label: 'small', work: 2, iterations: 150 }, { label: 'compute-heavy', work: 128, iterations: 20 }],
  reps: 2,
};
export const SWEEP_QUICK: Partial<SweepOptions> = {
  jobs: 4,
  variants: [{ label: 'small', work: 2, iterations: 100 }, { label: 'compute-heavy', work: 128, iterations: 12 }],
  reps: 1,
};

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

/** One job's settings in a variant. */
interface JobSpec {
  jobs: number;
  iterations: number;
  work: number;
  persistentBytes: number;
  ephemeralBytes: number;
  label: string;
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

/** The paper bench's sweep of bench/paper/jobs/train.js copies. */
function trainSweep(options: JobSpec): SweepSpec {
  const hints = ['--persistent', String(options.persistentBytes), '--ephemeral', String(options.ephemeralBytes)];
  return {
    jobs: options.jobs, iterations: options.iterations, label: options.label,
    start: (service, name) => service.run(join(PAPER_JOBS_DIR, 'train.js'),
      ['--iterations', String(options.iterations), '--work', String(options.work), ...hints],
      ['--name', name, '--iterations', String(options.iterations), ...hints]).done.then((run) => expectSuccess(run, `sweep ${name}`)),
  };
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
    throw new Error(`bench paper sweep: ${mode} jobs did not all finish: ${JSON.stringify(infos.map((i) => [i.name, i.state, i.error]))}`);
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
export interface ModeMean {
  wallMakespanMs: number;
  serviceMakespanMs: number;
  wallThroughput: number;
  serviceThroughput: number;
  medianIterationMs: number;
  meanBusyShare: number | null;
  coresBusy: number;
  maxLanes: number;
}

interface VariantOutcome extends SweepOutcome {
  variant: SweepVariant;
}

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

/** Runs `spec` one at a time and all at once on one fresh `salus serve SERVE_ARGS`, `reps` times each, alternating. */
export async function runSweep(spec: SweepSpec, reps: number, serveArgs: readonly string[], log: (line: string) => void): Promise<SweepOutcome & { gpu: GpuInfo | null }> {
  const service = await startService(serveArgs);
  try {
    const gpu = await gpuOf(service);
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

async function runVariant(options: SweepOptions, variant: SweepVariant, log: (line: string) => void): Promise<{ outcome: VariantOutcome; gpu: GpuInfo | null }> {
  const spec = trainSweep({ ...variant, jobs: options.jobs, persistentBytes: options.persistentBytes, ephemeralBytes: options.ephemeralBytes });
  const { gpu, ...outcome } = await runSweep(spec, options.reps, ['--memory', '256MiB', '--policy', 'PACK'], log);
  return { gpu, outcome: { variant, ...outcome } };
}

export async function benchSweep(overrides: Partial<SweepOptions> = {}, log: (line: string) => void = () => {}): Promise<PaperResult> {
  const options: SweepOptions = { ...SWEEP_DEFAULTS, ...overrides };
  const outcomes: VariantOutcome[] = [];
  let gpu: GpuInfo | null = null;
  for (const variant of options.variants) {
    const { outcome, gpu: seen } = await runVariant(options, variant, log);
    gpu ??= seen;
    outcomes.push(outcome);
  }
  const busy = (m: ModeMean) => (m.meanBusyShare === null ? 'n/a' : `${(100 * m.meanBusyShare).toFixed(0)}%`);
  const row = (label: string, m: ModeMean) => `${label.padEnd(42)}${secs(m.wallMakespanMs).padEnd(10)}${secs(m.serviceMakespanMs).padEnd(10)}`
    + `${`${m.wallThroughput} it/s`.padEnd(12)}${`${m.serviceThroughput} it/s`.padEnd(13)}${`${m.medianIterationMs.toFixed(1)} ms`.padEnd(10)}${busy(m).padEnd(6)}${m.maxLanes}`;
  const summary = [
    `${options.jobs} identical jobs per variant (persistent ${options.persistentBytes / KiB} KiB, ephemeral ${options.ephemeralBytes / KiB} KiB); makespan wall (spawn→exit) and service (submitted→finished)`,
    `${''.padEnd(42)}${'wall'.padEnd(10)}${'service'.padEnd(10)}${'wall thr.'.padEnd(12)}${'service thr.'.padEnd(13)}${'iter'.padEnd(10)}${'busy'.padEnd(6)}lanes`,
    ...outcomes.flatMap((o) => {
      const name = `${o.variant.label} (${o.variant.iterations} it, work ${o.variant.work})`;
      return [row(`${name}: alone`, o.sequential), row(`${name}: PACK`, o.packed)];
    }),
    `throughput PACK / one at a time: ${outcomes.map((o) => `${o.variant.label} ${times(o.wallRatio)} wall, ${times(o.serviceRatio)} service`
      + (o.reps.length > 1 ? ` (per rep: ${o.reps.map((r) => `${times(r.wallRatio)}/${times(r.serviceRatio)}`).join(', ')})` : '')).join('; ')}; paper: 2.38× (SuperRes), little for ResNet50`,
  ];
  const headline: PaperResult['headline'] = { jobs: options.jobs, paperRatio: 2.38 };
  for (const o of outcomes) {
    const key = o.variant.label.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    headline[`${key}ThroughputRatioWall`] = o.wallRatio;
    headline[`${key}ThroughputRatioService`] = o.serviceRatio;
    headline[`${key}SequentialBusyShare`] = o.sequential.meanBusyShare;
    headline[`${key}PackedBusyShare`] = o.packed.meanBusyShare;
    headline[`${key}PackedMaxLanes`] = o.packed.maxLanes;
  }
  return {
    name: 'sweep',
    method: 'N identical training jobs on a PACK service, per variant (small: round-trip dominated; compute-heavy: kernel dominated): one after another (each alone) vs all at once (a lane each); makespan wall (spawn to exit) and service-side (submittedAt to finishedAt, summed for one-at-a-time); throughput = total iterations / makespan; busy share sampled from the service once a second.',
    headline,
    summary,
    gpu,
    data: { options, variants: outcomes },
  };
}
