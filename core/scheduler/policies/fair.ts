/**
 * FAIR: least attained service (GPU milliseconds) per unit of share first, so jobs
 * converge toward GPU time in proportion to their declared shares (1 each unless set)
 * whatever their iteration lengths: two jobs asking all the time at shares 3 and 1
 * get 3/4 and 1/4 of the GPU, to within one iteration, until one is done. As in
 * Salus's FAIR, the measure is the time received since the job came, so a newcomer
 * runs alone until it has caught up with the others' time per share. Strict with a
 * short hold by default: a job that just finished never asks at its own boundary (it
 * does CPU work first), so a work-conserving lane would hand the turn to another job
 * every time and FAIR would decay into round-robin by iterations, unfair to jobs
 * with short ones.
 */
import type { Policy, SchedJob } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, WATCHDOG_DEFAULTS } from './common.js';

/** GPU time the job has received per unit of its share: FAIR runs the least first. */
function normalizedAttainedMs(job: SchedJob): number {
  return job.attainedMs / job.share;
}

function byNormalizedAttained(a: SchedJob, b: SchedJob): number {
  return normalizedAttainedMs(a) - normalizedAttainedMs(b) || byArrival(a, b);
}

/** Least attained GPU time per share first, one lane, lane held 50 ms for the most deserving job. */
export const fairPolicy: Policy = {
  name: 'FAIR',
  knobs: COMMON_KNOBS,
  defaults: { workConserving: false, holdMs: 50, maxLanes: 1, ...WATCHDOG_DEFAULTS },
  rank: (jobs) => [...jobs].sort(byNormalizedAttained),
  maxLanes: laneLimit,
};
