/**
 * Experiment 1 (paper: average JCT 3.19× better with SRTF than FIFO).
 *
 * A seeded trace of training jobs: lengths from three classes (short, medium,
 * long iterations of a few-ms kernel) in a fixed mix, shuffled, arriving with
 * exponential (Poisson) gaps whose mean makes the offered load exceed one lane,
 * so a queue forms as in the paper's trace. Every job declares its total
 * iterations (`salus run --iterations`) and its memory. The same trace runs on a
 * fresh `salus serve --policy FIFO` and on a fresh `--policy SRTF` (one lane, the
 * default knobs), alternating, `reps` times each.
 *
 * Arrivals as in bench/traceRun.ts: every job is started, admitted and set up
 * (weights resident) before the trace begins, in arrival order, and released at
 * its arrival time; JCT = finishedAt (salus jobs) − arrival.
 *
 * Beside the measured ratio, the simulator (core/sim: the service's own scheduler
 * and policies in virtual time) replays the trace on one lane with no overhead and
 * each run's measured iteration times, under FIFO and under SRTF: the ratio the
 * trace itself implies (the "ideal lane"). The same simulation over 200 seeds of
 * this mix and load, and over 100-job traces of the same shares, says how typical
 * our trace is.
 */
import { join } from 'node:path';
import { runTrace, type TraceEntry } from '../traceRun.js';
import {
  exponential, KiB, lastLine, mean, median, PAPER_JOBS_DIR, ratio, round, secs, seededRandom, shuffle,
  quantile, times, type PaperResult, type Sample,
} from './common.js';
import type { GpuInfo } from '../../core/protocol/state.js';
import { simulate } from '../../core/sim/simulator.js';
import type { TraceJob as SimTraceJob } from '../../core/sim/trace.js';

export interface JctOptions {
  seed: number;
  /** Jobs of each class: [short, medium, long]. */
  mix: [number, number, number];
  /** Iterations of each class. */
  classIterations: [number, number, number];
  /** Mean gap between arrivals, ms. */
  meanGapMs: number;
  /** Kernel work per thread (sets the iteration time: ~10 ms here). */
  work: number;
  persistentBytes: number;
  ephemeralBytes: number;
  /** How many times each policy runs the trace (alternating FIFO, SRTF, SRTF, FIFO, …). */
  reps: number;
}

export const JCT_DEFAULTS: JctOptions = {
  seed: 7,
  mix: [6, 5, 3],
  classIterations: [10, 40, 120],
  meanGapMs: 300,
  work: 32,
  persistentBytes: 256 * KiB,
  ephemeralBytes: 64 * KiB,
  reps: 2,
};

export const JCT_QUICK: Partial<JctOptions> = { mix: [4, 3, 1], reps: 1 };

const CLASS_NAMES = ['short', 'medium', 'long'] as const;

export interface TraceJob {
  index: number;
  name: string;
  cls: (typeof CLASS_NAMES)[number];
  iterations: number;
  /** Offset from the start of the trace, ms. */
  arrivalMs: number;
}

/** The seeded trace: the class mix shuffled, Poisson arrivals (the first at 0). */
export function makeTrace(options: JctOptions): TraceJob[] {
  const random = seededRandom(options.seed);
  const classes = shuffle(options.mix.flatMap((count, c) => Array.from({ length: count }, () => c)), random);
  let t = 0;
  return classes.map((c, index) => {
    if (index > 0) t += exponential(options.meanGapMs, random);
    const cls = CLASS_NAMES[c];
    return { index, name: `jct-${String(index).padStart(2, '0')}-${cls}`, cls, iterations: options.classIterations[c], arrivalMs: Math.round(t) };
  });
}

/** A job for the one-lane simulation. */
export interface SimJob {
  arrivalMs: number;
  iterations: number;
  iterationMs: number;
}

/**
 * Per-job completion times (ms after arrival) on one lane with no overhead, decided by
 * the service's own scheduler and policy through the simulator (core/sim): FIFO runs
 * each job to its end, SRTF switches at iteration boundaries on its measured estimates.
 */
export function simulateLane(jobs: readonly SimJob[], policy: 'FIFO' | 'SRTF'): number[] {
  const trace = jobs.map((job, i): SimTraceJob => ({
    name: `job-${i + 1}`, arrivalS: job.arrivalMs / 1000, iterations: job.iterations, iterationMs: job.iterationMs,
    persistentBytes: 0, ephemeralBytes: 0, priority: 0, gapMs: 0,
  }));
  return simulate(trace, { policy }).jobs.map((job) => job.jctMs!);
}

/** Ideal-lane (simulated, no overhead) FIFO/SRTF ratio of avg JCT for a trace with a uniform iteration time. */
export function idealRatio(trace: readonly TraceJob[], iterationMs: number): number {
  const sim = trace.map((job) => ({ arrivalMs: job.arrivalMs, iterations: job.iterations, iterationMs }));
  return mean(simulateLane(sim, 'FIFO')) / mean(simulateLane(sim, 'SRTF'));
}

/**
 * How typical the trace is: the ideal ratio over many seeds of the same mix and
 * load, and over 100-job traces (the paper's size) of the same class shares and load.
 */
export function traceContext(options: JctOptions, iterationMs: number) {
  const seeds = Array.from({ length: 200 }, (_, i) => i + 1);
  const sameSize = seeds.map((seed) => idealRatio(makeTrace({ ...options, seed }), iterationMs));
  const total = options.mix.reduce((a, b) => a + b, 0);
  const mix100 = options.mix.map((n) => Math.round((100 * n) / total)) as [number, number, number];
  const paperSize = seeds.slice(0, 50).map((seed) => idealRatio(makeTrace({ ...options, seed, mix: mix100 }), iterationMs));
  const summarize = (values: number[]) => ({ p10: round(quantile(values, 0.1), 2), median: round(median(values), 2), p90: round(quantile(values, 0.9), 2) });
  return { seeds: seeds.length, sameSize: summarize(sameSize), paperSizeMix: mix100, paperSize: summarize(paperSize) };
}

interface JobOutcome {
  name: string;
  cls: string;
  iterations: number;
  /** Epoch ms the trace released the job. */
  arrivedAt: number;
  /** When the service returned its memory (salus jobs' finishedAt). */
  finishedAt: number;
  /** finishedAt − arrivedAt. */
  jctMs: number;
  /** The job's own view: end of its last step − arrival. */
  jobSideJctMs: number | null;
  /** Its first step began this long after its arrival (timer and CPU lateness). */
  firstStepLateMs: number | null;
  avgIterationMs: number | null;
  attainedMs: number;
  queuedMs: number;
}

interface RunOutcome {
  policy: 'FIFO' | 'SRTF';
  rep: number;
  avgJctMs: number;
  medianJctMs: number;
  makespanMs: number;
  /** Σ lane time granted / makespan: how much of the run the one lane held an iteration. */
  laneUtilization: number;
  meanBusyShare: number | null;
  medianIterationMs: number;
  avgJctByClassMs: Record<string, number>;
  simulated: { fifoAvgJctMs: number; srtfAvgJctMs: number; ratio: number | null };
  jobs: JobOutcome[];
  samples: Sample[];
}

async function runPolicy(trace: readonly TraceJob[], policy: 'FIFO' | 'SRTF', rep: number, options: JctOptions): Promise<{ outcome: RunOutcome; gpu: GpuInfo | null }> {
  const hints = ['--persistent', String(options.persistentBytes), '--ephemeral', String(options.ephemeralBytes)];
  const entries: TraceEntry[] = trace.map((job) => ({
    name: job.name,
    arrivalMs: job.arrivalMs,
    launch: (startFile) => ({
      file: join(PAPER_JOBS_DIR, 'train.js'),
      jobArgs: ['--iterations', String(job.iterations), '--work', String(options.work), ...hints, '--start-file', startFile, '--arrival-ms', String(job.arrivalMs)],
      salusArgs: ['--iterations', String(job.iterations), ...hints],
    }),
  }));
  // Set up (weights resident) before the trace begins.
  const { t0, gpu, runs: finished, infos, samples } = await runTrace(entries, {
    serveArgs: ['--memory', '256MiB', '--policy', policy],
    ready: (info) => info.memory.persistentBytes >= options.persistentBytes,
  });
  const jobs = trace.map((job, i): JobOutcome => {
    const info = infos[i];
    const arrivedAt = t0 + job.arrivalMs;
    const last = lastLine(finished[i].lines, 'lastEnd');
    return {
      name: job.name, cls: job.cls, iterations: job.iterations, arrivedAt, finishedAt: info.finishedAt!,
      jctMs: info.finishedAt! - arrivedAt,
      jobSideJctMs: last ? round(last.lastEnd - arrivedAt, 1) : null,
      firstStepLateMs: last?.firstStart ? round(last.firstStart - arrivedAt, 1) : null,
      avgIterationMs: info.avgIterationMs, attainedMs: round(info.attainedMs), queuedMs: round(info.queuedMs),
    };
  });
  const jcts = jobs.map((j) => j.jctMs);
  const makespanMs = Math.max(...jobs.map((j) => j.finishedAt)) - t0;
  const iterationTimes = jobs.flatMap((j) => (j.avgIterationMs === null ? [] : [j.avgIterationMs]));
  const fallbackIterationMs = median(iterationTimes);
  const sim = trace.map((job, i) => ({ arrivalMs: job.arrivalMs, iterations: job.iterations, iterationMs: jobs[i].avgIterationMs ?? fallbackIterationMs }));
  const simFifo = mean(simulateLane(sim, 'FIFO'));
  const simSrtf = mean(simulateLane(sim, 'SRTF'));
  const avgJctByClassMs = Object.fromEntries(CLASS_NAMES
    .map((cls) => [cls, jobs.filter((j) => j.cls === cls).map((j) => j.jctMs)] as const)
    .filter(([, values]) => values.length > 0)
    .map(([cls, values]) => [cls, round(mean(values), 1)]));
  const busy = samples.map((s) => s.busyShare);
  return {
    gpu,
    outcome: {
      policy, rep,
      avgJctMs: round(mean(jcts), 1),
      medianJctMs: round(median(jcts), 1),
      makespanMs: round(makespanMs, 1),
      laneUtilization: round(jobs.reduce((sum, j) => sum + j.attainedMs, 0) / makespanMs),
      meanBusyShare: busy.length ? round(mean(busy)) : null,
      medianIterationMs: round(fallbackIterationMs),
      avgJctByClassMs,
      simulated: { fifoAvgJctMs: round(simFifo, 1), srtfAvgJctMs: round(simSrtf, 1), ratio: ratio(simFifo, simSrtf) },
      jobs,
      samples,
    },
  };
}

export async function benchJct(overrides: Partial<JctOptions> = {}, log: (line: string) => void = () => {}): Promise<PaperResult> {
  const options: JctOptions = { ...JCT_DEFAULTS, ...overrides };
  const trace = makeTrace(options);
  const runs: RunOutcome[] = [];
  let gpu: GpuInfo | null = null;
  for (let rep = 0; rep < options.reps; rep++) {
    const order: ('FIFO' | 'SRTF')[] = rep % 2 === 0 ? ['FIFO', 'SRTF'] : ['SRTF', 'FIFO'];
    for (const policy of order) {
      const { outcome, gpu: seen } = await runPolicy(trace, policy, rep, options);
      gpu ??= seen;
      runs.push(outcome);
      log(`jct: ${policy} rep ${rep + 1}: avg JCT ${secs(outcome.avgJctMs)}, makespan ${secs(outcome.makespanMs)}`);
    }
  }
  const of = (policy: 'FIFO' | 'SRTF') => runs.filter((r) => r.policy === policy);
  const pooled = (policy: 'FIFO' | 'SRTF', key: 'avgJctMs' | 'medianJctMs' | 'makespanMs') => round(mean(of(policy).map((r) => r[key])), 1);
  const fifo = { avg: pooled('FIFO', 'avgJctMs'), median: pooled('FIFO', 'medianJctMs'), makespan: pooled('FIFO', 'makespanMs') };
  const srtf = { avg: pooled('SRTF', 'avgJctMs'), median: pooled('SRTF', 'medianJctMs'), makespan: pooled('SRTF', 'makespanMs') };
  const simRatio = round(mean(runs.flatMap((r) => (r.simulated.ratio === null ? [] : [r.simulated.ratio]))), 2);
  const perRep = Array.from({ length: options.reps }, (_, rep) => {
    const f = runs.find((r) => r.rep === rep && r.policy === 'FIFO')!;
    const s = runs.find((r) => r.rep === rep && r.policy === 'SRTF')!;
    return ratio(f.avgJctMs, s.avgJctMs);
  });
  const measured = ratio(fifo.avg, srtf.avg);
  const classes = CLASS_NAMES.map((cls, c) => `${options.mix[c]} ${cls} (${options.classIterations[c]} it)`).join(', ');
  const iterMs = round(median(runs.map((r) => r.medianIterationMs)), 1);
  const offered = round((mean(trace.map((j) => j.iterations)) * iterMs) / options.meanGapMs, 2);
  const context = traceContext(options, iterMs);
  const summary = [
    `trace: ${trace.length} jobs, ${classes}; Poisson gaps, mean ${options.meanGapMs} ms (seed ${options.seed}); iteration ≈ ${iterMs} ms; offered load ≈ ${offered} lanes`,
    'JCT = finishedAt (salus jobs) − arrival; every job was started and admitted before the trace, in arrival order, and released at its arrival',
    `                    avg JCT     median JCT  makespan`,
    `FIFO (one lane)     ${secs(fifo.avg).padEnd(12)}${secs(fifo.median).padEnd(12)}${secs(fifo.makespan)}`,
    `SRTF (one lane)     ${secs(srtf.avg).padEnd(12)}${secs(srtf.median).padEnd(12)}${secs(srtf.makespan)}`,
    `avg JCT FIFO/SRTF: ${times(measured)} measured (per rep: ${perRep.map(times).join(', ')}); ${times(simRatio)} on an ideal lane with the same arrivals and iteration times; paper: 3.19× (100 jobs)`,
    `makespan FIFO/SRTF: ${times(ratio(fifo.makespan, srtf.makespan))} (paper, unverified: 0.99×); lane held an iteration ${(100 * mean(runs.map((r) => r.laneUtilization))).toFixed(0)}% of the makespan`,
    `ideal-lane ratio of other traces: ${context.seeds} seeds of this mix and load: median ${times(context.sameSize.median)} (p10 ${times(context.sameSize.p10)}, p90 ${times(context.sameSize.p90)}); 100-job traces (${context.paperSizeMix.join('/')}): median ${times(context.paperSize.median)} (p10 ${times(context.paperSize.p10)}, p90 ${times(context.paperSize.p90)})`,
  ];
  return {
    name: 'jct',
    method: 'Seeded trace of training jobs (classes of iterations, shuffled fixed mix, Poisson arrivals) run on a fresh service under FIFO and under SRTF (one lane, default knobs), alternating. Jobs are started and admitted before the trace in arrival order and released at their arrival time; JCT = finishedAt (salus jobs) − arrival. An ideal one-lane simulation with the measured iteration times gives the ratio the trace alone implies; the same over 200 seeds and over a 100-job trace gives context.',
    headline: {
      jobs: trace.length,
      fifoAvgJctS: round(fifo.avg / 1000, 2),
      srtfAvgJctS: round(srtf.avg / 1000, 2),
      fifoMedianJctS: round(fifo.median / 1000, 2),
      srtfMedianJctS: round(srtf.median / 1000, 2),
      fifoMakespanS: round(fifo.makespan / 1000, 2),
      srtfMakespanS: round(srtf.makespan / 1000, 2),
      avgJctRatioFifoOverSrtf: measured,
      idealLaneRatio: simRatio,
      idealRatioOtherSeedsMedian: context.sameSize.median,
      idealRatio100JobTracesMedian: context.paperSize.median,
      paperRatio: 3.19,
    },
    summary,
    gpu,
    data: { options, trace, context, runs },
  };
}
