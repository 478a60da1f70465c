/**
 * The iteration scheduler and its policies: what the rest of the service imports.
 * See `scheduler.ts` for the contract and `policies/` for the policies.
 */
export { createFakeClock, systemClock, type Clock, type FakeClock, type TimerHandle } from './clock.js';
export { applyParams, describeKnob, parseKnobValue } from './params.js';
export type { Policy, PolicyParams, SchedJob } from './policy.js';
export { getPolicy, POLICIES } from './policies/registry.js';
export { withAttainedFractions } from './attained.js';
export {
  createScheduler,
  ITERATION_EMA_WEIGHT,
  JobRemovedError,
  type JobStats,
  type NewJob,
  type Scheduler,
  type SchedulerChange,
  type SchedulerOptions,
} from './scheduler.js';
