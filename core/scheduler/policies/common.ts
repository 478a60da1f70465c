/**
 * Knobs and orderings that several policies share. A policy lists the knobs it reads
 * in its own file; these are the building blocks.
 */
import type { PolicyKnob } from '../../protocol/state.js';
import type { PolicyParams, SchedJob } from '../policy.js';
import { WATCHDOG_DEFAULTS, WATCHDOG_KNOBS } from '../watchdog.js';

/** Lets the lane run the next asking job at once when the best job is not asking. */
export const WORK_CONSERVING_KNOB: PolicyKnob = {
  key: 'workConserving',
  description: 'When the best job is not asking for an iteration, run the next job that asks at once (off: hold the lane for holdMs)',
  kind: 'boolean',
};

/**
 * How long a strict (non-work-conserving) lane waits for a better job to ask again.
 * Between iterations a job does CPU work; handing the lane away at every boundary
 * would make SRTF or PRIORITY no better than round-robin.
 */
export const HOLD_KNOB: PolicyKnob = {
  key: 'holdMs',
  description: 'With workConserving off: how long after its last iteration a better job keeps the lane before the next job may run',
  kind: 'number',
  min: 0,
  max: 10_000,
  step: 10,
  unit: 'ms',
};

/** Upper bound on side-by-side lanes; admission reads it through `Scheduler.maxLanes()`. */
export const MAX_LANES_KNOB: PolicyKnob = {
  key: 'maxLanes',
  description: 'How many lanes admission may open side by side (each lane runs one iteration at a time)',
  kind: 'number',
  min: 1,
  max: 64,
  step: 1,
  unit: 'lanes',
};

/** The knobs every policy has, in display order (the iteration watchdog's last). */
export const COMMON_KNOBS: readonly PolicyKnob[] = [WORK_CONSERVING_KNOB, HOLD_KNOB, MAX_LANES_KNOB, ...WATCHDOG_KNOBS];

/** Defaults that make a policy strict: one lane, the lane held 250 ms for the best job. */
export const STRICT_DEFAULTS = { workConserving: false, holdMs: 250, maxLanes: 1, ...WATCHDOG_DEFAULTS } as const;

export { WATCHDOG_DEFAULTS };

/** Comparator: earlier `addJob` first. The last tie-breaker of every policy. */
export function byArrival(a: SchedJob, b: SchedJob): number {
  return a.arrivalSeq - b.arrivalSeq;
}

/** The `maxLanes` knob as a whole number of at least 1. */
export function laneLimit(params: PolicyParams): number {
  return Math.max(1, Math.floor(Number(params.maxLanes ?? 1)));
}
