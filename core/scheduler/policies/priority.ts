/**
 * PRIORITY (ours; Salus had none at the iteration level): higher priority first.
 * Against starvation, a waiting job's effective priority grows with its wait:
 * effective = priority + agingPerSecond × seconds since its current wait began.
 * Ties go to the earlier arrival. Strict by default.
 */
import type { PolicyKnob } from '../../protocol/state.js';
import type { Policy, PolicyParams, SchedJob } from '../policy.js';
import { byArrival, COMMON_KNOBS, laneLimit, STRICT_DEFAULTS } from './common.js';

const AGING_KNOB: PolicyKnob = {
  key: 'agingPerSecond',
  description: 'Priority a waiting job gains per second of waiting, so low priorities are never starved (0: no aging)',
  kind: 'number',
  min: 0,
  max: 100,
  step: 0.01,
  unit: '/s',
};

/** A job's priority plus what it gained by waiting, at `nowMs`. */
export function effectivePriority(job: SchedJob, params: PolicyParams, nowMs: number): number {
  const waitedMs = job.waitingSinceMs === null ? 0 : Math.max(0, nowMs - job.waitingSinceMs);
  return job.priority + Number(params.agingPerSecond) * (waitedMs / 1000);
}

function rankPriority(jobs: readonly SchedJob[], params: PolicyParams, nowMs: number): SchedJob[] {
  const effective = new Map(jobs.map((j) => [j, effectivePriority(j, params, nowMs)]));
  return [...jobs].sort((a, b) => effective.get(b)! - effective.get(a)! || byArrival(a, b));
}

/** Highest (aged) priority first, one lane, strict. */
export const priorityPolicy: Policy = {
  name: 'PRIORITY',
  knobs: [...COMMON_KNOBS, AGING_KNOB],
  defaults: { ...STRICT_DEFAULTS, agingPerSecond: 0.1 },
  rank: rankPriority,
  maxLanes: laneLimit,
};
