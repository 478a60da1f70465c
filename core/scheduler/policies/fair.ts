/**
 * FAIR: least attained service (GPU milliseconds) first, so jobs converge toward
 * equal GPU time whatever their iteration lengths. Strict with a short hold by
 * default: a job that just finished never asks at its own boundary (it does CPU work
 * first), so a work-conserving lane would hand the turn to another job every time and
 * FAIR would decay into round-robin by iterations, unfair to jobs with short ones.
 */
import type { Policy, SchedJob } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, WATCHDOG_DEFAULTS } from './common.js';

function byAttained(a: SchedJob, b: SchedJob): number {
  return a.attainedMs - b.attainedMs || byArrival(a, b);
}

/** Least attained GPU time first, one lane, lane held 50 ms for the most deserving job. */
export const fairPolicy: Policy = {
  name: 'FAIR',
  knobs: COMMON_KNOBS,
  defaults: { workConserving: false, holdMs: 50, maxLanes: 1, ...WATCHDOG_DEFAULTS },
  rank: (jobs) => [...jobs].sort(byAttained),
  maxLanes: laneLimit,
};
