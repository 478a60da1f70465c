/**
 * SRTF: shortest remaining time first, re-decided at every iteration boundary (so a
 * short job preempts a long one between its iterations, never inside one).
 * remaining = (itersTotal − itersDone) × avgIterationMs. A job with no declared total
 * ranks after every job with one; a job with no measured iteration yet is assumed as
 * fast as the mean of the lane's measured jobs, or `defaultIterationMs` when none is.
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

function rankSrtf(jobs: readonly SchedJob[], params: PolicyParams): SchedJob[] {
  const measured = jobs.flatMap((j) => (j.avgIterationMs === null ? [] : [j.avgIterationMs]));
  const fallbackMs = measured.length > 0
    ? measured.reduce((sum, ms) => sum + ms, 0) / measured.length
    : Number(params.defaultIterationMs);
  const remainingMs = new Map<SchedJob, number>();
  for (const job of jobs) {
    const itersLeft = job.itersTotal === null ? Infinity : Math.max(0, job.itersTotal - job.itersDone);
    remainingMs.set(job, itersLeft === Infinity ? Infinity : itersLeft * (job.avgIterationMs ?? fallbackMs));
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
  knobs: [...COMMON_KNOBS, DEFAULT_ITERATION_KNOB],
  defaults: { ...STRICT_DEFAULTS, defaultIterationMs: 100 },
  rank: rankSrtf,
  maxLanes: laneLimit,
};
