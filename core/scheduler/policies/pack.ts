/**
 * PACK: arrival order inside a lane, and many lanes side by side — the gain comes
 * from running the iterations of jobs in different lanes at once (Salus's
 * hyper-parameter sweep). Work-conserving by default.
 */
import type { Policy } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, WATCHDOG_DEFAULTS } from './common.js';

/** Arrival order, up to 16 lanes by default. */
export const packPolicy: Policy = {
  name: 'PACK',
  knobs: COMMON_KNOBS,
  defaults: { workConserving: true, holdMs: 250, maxLanes: 16, ...WATCHDOG_DEFAULTS },
  rank: (jobs) => [...jobs].sort(byArrival),
  maxLanes: laneLimit,
};
