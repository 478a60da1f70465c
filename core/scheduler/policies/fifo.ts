/**
 * FIFO: the oldest job runs; the next starts when it is done (Salus's FIFO: only the
 * oldest live job runs, non-preemptive). Strict by default, so a job's CPU work
 * between iterations does not hand the lane to a younger job.
 */
import type { Policy } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, STRICT_DEFAULTS } from './common.js';

/** First in, first out, one lane. */
export const fifoPolicy: Policy = {
  name: 'FIFO',
  knobs: COMMON_KNOBS,
  defaults: { ...STRICT_DEFAULTS },
  rank: (jobs) => [...jobs].sort(byArrival),
  maxLanes: laneLimit,
};
