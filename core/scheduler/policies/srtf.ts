/**
 * SRTF: shortest remaining time first, re-decided at every iteration boundary (so a
 * short job preempts a long one between its iterations, never inside one), online:
 *
 * - A measured job (two iterations run: the first is a warm-up of shader compiles and
 *   first uploads; its average starts from the second, scheduler.ts) has
 *   (itersTotal − itersDone) × avgIterationMs left.
 * - A job not yet measured that declared its run time (`durationMs`, as Salus's
 *   clients did) has its declared share of it left: durationMs × itersLeft /
 *   itersTotal, or durationMs − attained without a total.
 * - A job not yet measured that declared only its iterations (`probeFirst`, the
 *   default) runs them at its lane's pace: as slow as the slowest measured job there
 *   (`defaultIterationMs` when none is), or as its own first iteration if that was
 *   faster, plus, before its first, what a first iteration costs in the lane. Jobs
 *   not yet measured thus go by their declared lengths (ten jobs arriving together,
 *   declaring 10…1 iterations of equal length, run shortest first), and a guess never
 *   puts one ahead of a measured job that another job's speed says nothing about. A
 *   warm-up counted in is why a job nearly done is not held up by newcomers' warm-ups
 *   (frameworks' can cost as much as many steps). With `probeFirst` off the pace is
 *   the mean of the lane's measured jobs, and no warm-up is counted.
 * - A job with neither a total nor a duration ranks after every job with one.
 *
 * Measuring is spent only where it can change the order and costs little: a job
 * that declares only its iterations, PROBE_MIN_ITERATIONS or more (so its two
 * measuring iterations are at most a tenth of it), is measured early: until it is,
 * it ranks as what a first iteration costs in its lane (first of all when none has
 * run), ahead of jobs with more left than that, not of one about to finish; among
 * such jobs the shorter declared goes first. That is how a job of short iterations
 * arriving among slow ones (a 1-minute VAE behind VGG16s) is found short. A job
 * declaring fewer iterations is ranked by its declared length instead: measuring it
 * first would cost about as much as running it in order. Remaining time is never
 * negative.
 */
import type { PolicyKnob } from '../../protocol/state.js';
import type { Policy, PolicyParams, SchedJob } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, STRICT_DEFAULTS } from './common.js';

/** Iterations that measure a job: a warm-up, then one its average starts from. */
const MEASURE_ITERATIONS = 2;

/** Jobs declaring at least this many iterations are measured early: measuring is then at most a tenth of the job. */
export const PROBE_MIN_ITERATIONS = 10 * MEASURE_ITERATIONS;

const DEFAULT_ITERATION_KNOB: PolicyKnob = {
  key: 'defaultIterationMs',
  description: 'Assumed iteration time of a job not yet measured, when no job has been',
  kind: 'number',
  min: 1,
  max: 60_000,
  step: 1,
  unit: 'ms',
};

const PROBE_FIRST_KNOB: PolicyKnob = {
  key: 'probeFirst',
  description: `Measure a job declaring ${PROBE_MIN_ITERATIONS}+ iterations early (its first two rank as a first iteration costs in its lane); rank one declaring fewer at the pace of its lane's slowest measured job. Off: every job not yet measured at the lane's mean pace`,
  kind: 'boolean',
};

const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** Whether the job's average is a measure of its steady iterations (its warm-up excluded). */
function isMeasured(job: SchedJob): boolean {
  return job.avgIterationMs !== null && job.itersDone >= MEASURE_ITERATIONS;
}

/** Where SRTF puts a job: by `keyMs`, then `remainingMs`, then arrival. */
interface SrtfRank {
  /** Estimated GPU time left, ≥ 0; Infinity when the job declared neither a total nor a duration. */
  remainingMs: number;
  /** What the job ranks by: its remaining time, or while it is measured early, what a first iteration costs. */
  keyMs: number;
}

/** Each job's place under SRTF, as the file's comment says. */
function srtfRanks(jobs: readonly SchedJob[], params: PolicyParams): Map<SchedJob, SrtfRank> {
  const measured = jobs.filter(isMeasured).map((j) => j.avgIterationMs!);
  const paceMs = measured.length === 0
    ? Number(params.defaultIterationMs)
    : params.probeFirst === true ? Math.max(...measured) : mean(measured);
  const firsts = jobs.flatMap((j) => (j.firstIterationMs === null ? [] : [j.firstIterationMs]));
  // What measuring a job costs here: a first iteration as they have cost in this lane (nothing known: first of all).
  const probeMs = firsts.length > 0 ? mean(firsts) : -1;
  const ranks = new Map<SchedJob, SrtfRank>();
  for (const job of jobs) {
    const remainingMs = Math.max(0, estimate(job));
    const probing = params.probeFirst === true && !isMeasured(job) && job.durationMs === null && job.itersTotal !== null &&
      job.itersTotal >= PROBE_MIN_ITERATIONS && job.itersDone < job.itersTotal;
    ranks.set(job, { remainingMs, keyMs: probing ? probeMs : remainingMs });
  }
  return ranks;

  function estimate(job: SchedJob): number {
    if (job.itersTotal === null) return job.durationMs === null ? Infinity : job.durationMs - job.attainedMs;
    const itersLeft = job.itersTotal - job.itersDone;
    if (itersLeft <= 0) return 0;
    if (isMeasured(job)) return itersLeft * job.avgIterationMs!;
    if (job.durationMs !== null) return (job.durationMs * itersLeft) / job.itersTotal;
    if (params.probeFirst !== true) return itersLeft * paceMs;
    // Its own first iteration, a warm-up, bounds its steady ones.
    const steadyMs = Math.min(paceMs, job.firstIterationMs ?? Infinity);
    if (job.itersDone > 0) return itersLeft * steadyMs;
    const warmUpMs = firsts.length > 0 ? mean(firsts) : steadyMs;
    return warmUpMs + (itersLeft - 1) * steadyMs;
  }
}

function compareMs(a: number, b: number): number {
  // Infinity − Infinity is NaN: equal keys compare as 0.
  return a === b ? 0 : a < b ? -1 : 1;
}

function rankSrtf(jobs: readonly SchedJob[], params: PolicyParams): SchedJob[] {
  const ranks = srtfRanks(jobs, params);
  return [...jobs].sort((a, b) => {
    const ra = ranks.get(a)!;
    const rb = ranks.get(b)!;
    return compareMs(ra.keyMs, rb.keyMs) || compareMs(ra.remainingMs, rb.remainingMs) || byArrival(a, b);
  });
}

/** Shortest remaining time first, one lane, strict. */
export const srtfPolicy: Policy = {
  name: 'SRTF',
  knobs: [...COMMON_KNOBS, PROBE_FIRST_KNOB, DEFAULT_ITERATION_KNOB],
  defaults: { ...STRICT_DEFAULTS, probeFirst: true, defaultIterationMs: 100 },
  rank: rankSrtf,
  maxLanes: laneLimit,
};
