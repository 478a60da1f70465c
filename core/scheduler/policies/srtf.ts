/**
 * SRTF: shortest remaining time first, re-decided at every iteration boundary (so a
 * short job preempts a long one between its iterations, never inside one).
 * remaining = (itersTotal − itersDone) × avgIterationMs. A job with no declared total
 * ranks after every job with one.
 *
 * A job with a total is measured early (`probeFirst`): the paper's SRTF knew each
 * job's length from profiles, and a guess lets a short job that arrives among slow
 * ones wait as if it were long. Measuring takes two iterations: the first is a
 * warm-up (shader compiles, first uploads) that says little of the rest, and the
 * job's average starts from the second (scheduler.ts). Until then the job ranks as
 * what a first iteration has cost in its lane (the mean; first of all when none has
 * run yet), so it goes ahead of jobs with more left than that, not of one about to
 * finish: with frameworks a warm-up can cost as much as many steps, and probing
 * every newcomer ahead of all kept E1's first job, half a second from done, waiting
 * 17 s for the others' warm-ups. With `probeFirst` off an unmeasured job is
 * assumed as fast as the mean of the lane's measured jobs, or `defaultIterationMs`
 * when none is.
 */
import type { PolicyKnob } from '../../protocol/state.js';
import type { Policy, PolicyParams, SchedJob } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, STRICT_DEFAULTS } from './common.js';

const DEFAULT_ITERATION_KNOB: PolicyKnob = {
  key: 'defaultIterationMs',
  description: 'Assumed iteration time of a job not yet measured, when no job in its lane has been',
  kind: 'number',
  min: 1,
  max: 60_000,
  step: 1,
  unit: 'ms',
};

const PROBE_FIRST_KNOB: PolicyKnob = {
  key: 'probeFirst',
  description: "Measure a new job early (its first two iterations rank as what a first iteration costs in its lane), so its remaining time is measured, not guessed",
  kind: 'boolean',
};

/** Iterations that measure a new job under `probeFirst`: a warm-up, then one its average starts from. */
const PROBE_ITERATIONS = 2;

function rankSrtf(jobs: readonly SchedJob[], params: PolicyParams): SchedJob[] {
  const measured = jobs.flatMap((j) => (j.avgIterationMs === null ? [] : [j.avgIterationMs]));
  const fallbackMs = measured.length > 0
    ? measured.reduce((sum, ms) => sum + ms, 0) / measured.length
    : Number(params.defaultIterationMs);
  // What a first iteration costs in this lane: a new job's probe ranks as that (or first of all when nothing is known).
  const firsts = jobs.flatMap((j) => (j.firstIterationMs === null ? [] : [j.firstIterationMs]));
  const probeMs = firsts.length > 0 ? firsts.reduce((sum, ms) => sum + ms, 0) / firsts.length : -1;
  const remainingMs = new Map<SchedJob, number>();
  for (const job of jobs) {
    const itersLeft = job.itersTotal === null ? Infinity : Math.max(0, job.itersTotal - job.itersDone);
    const probe = params.probeFirst === true && job.itersDone < PROBE_ITERATIONS && itersLeft !== Infinity && itersLeft > 0;
    remainingMs.set(job, probe ? probeMs : itersLeft === Infinity ? Infinity : itersLeft * (job.avgIterationMs ?? fallbackMs));
  }
  return [...jobs].sort((a, b) => {
    const ra = remainingMs.get(a)!;
    const rb = remainingMs.get(b)!;
    // Infinity − Infinity is NaN: compare unknown totals by arrival instead.
    if (ra === rb) return byArrival(a, b);
    return ra < rb ? -1 : 1;
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
