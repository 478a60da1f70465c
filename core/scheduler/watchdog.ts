/**
 * The iteration watchdog. A granted iteration holds its lane until the job ends
 * it, so a job that hangs inside one (a deadlock, an await that never returns)
 * would stall every job in its lane. The watchdog times each granted iteration
 * against a limit relative to the job's own average and reports one that runs
 * past it; the service then fails that job. Pure logic over a `Scheduler` and a
 * `Clock`, like the scheduler itself.
 */
import type { PolicyKnob } from '../protocol/state.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import type { PolicyParams } from './policy.js';
import type { Scheduler } from './scheduler.js';

/** How many average iterations one iteration may take before the watchdog ends its job; 0 turns it off. */
export const HANG_FACTOR_KNOB: PolicyKnob = {
  key: 'hangFactor',
  description: 'Watchdog: an iteration that runs this many times longer than its job\'s average (and at least hangMinMs) fails the job; 0 = never',
  kind: 'number',
  min: 0,
  max: 1000,
  step: 1,
  unit: '×',
};

/** The least time any iteration is given; a job's first iteration (shaders compiling) gets FIRST_ITERATION_MULTIPLIER times it. */
export const HANG_MIN_KNOB: PolicyKnob = {
  key: 'hangMinMs',
  description: 'Watchdog: the least time an iteration is given before it counts as hung (a first iteration gets 5 times this)',
  kind: 'number',
  min: 1000,
  max: 3_600_000,
  step: 1000,
  unit: 'ms',
};

/** The watchdog's knobs and their defaults, which every policy carries. */
export const WATCHDOG_KNOBS: readonly PolicyKnob[] = [HANG_FACTOR_KNOB, HANG_MIN_KNOB];
export const WATCHDOG_DEFAULTS = { hangFactor: 50, hangMinMs: 60_000 } as const;

/** A job's first iteration compiles its shaders and warms caches: it gets this many times `hangMinMs`. */
export const FIRST_ITERATION_MULTIPLIER = 5;

/** An iteration the watchdog gave up on. */
export interface HungIteration {
  jobId: string;
  laneId: string;
  elapsedMs: number;
  limitMs: number;
  /** The job's average before this iteration; null for a first iteration. */
  avgIterationMs: number | null;
}

/**
 * How long an iteration may run under `params`: `hangFactor` × the job's
 * average, at least `hangMinMs` (FIRST_ITERATION_MULTIPLIER × that for a job
 * with no finished iteration). Null when the watchdog is off.
 */
export function iterationLimitMs(params: PolicyParams, avgIterationMs: number | null): number | null {
  const factor = Number(params.hangFactor ?? WATCHDOG_DEFAULTS.hangFactor);
  const minMs = Number(params.hangMinMs ?? WATCHDOG_DEFAULTS.hangMinMs);
  if (!(factor > 0)) return null;
  if (avgIterationMs === null) return minMs * FIRST_ITERATION_MULTIPLIER;
  return Math.max(minMs, factor * avgIterationMs);
}

/** What a job's row and log say about an iteration the watchdog ended. */
export function describeHung(hung: HungIteration): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const against = hung.avgIterationMs === null
    ? `a first iteration's limit of ${seconds(hung.limitMs)}`
    : `its limit of ${seconds(hung.limitMs)} (average iteration ${hung.avgIterationMs.toFixed(1)} ms)`;
  return `the watchdog ended the job: an iteration ran ${seconds(hung.elapsedMs)}, past ${against}; ` +
    'if such iterations are expected, raise the hangFactor or hangMinMs knob (salus policy --set)';
}

/**
 * Times every iteration `scheduler` grants; calls `onHung` once for one still
 * running at its limit (read from the policy's knobs at grant time). Returns a
 * function that stops watching.
 */
export function watchIterations(scheduler: Scheduler, onHung: (hung: HungIteration) => void, clock: Clock = systemClock): () => void {
  const timers = new Map<string, TimerHandle>();
  const disarm = (jobId: string) => {
    const timer = timers.get(jobId);
    if (timer === undefined) return;
    clock.clearTimeout(timer);
    timers.delete(jobId);
  };
  const arm = (jobId: string, laneId: string) => {
    disarm(jobId);
    const avgIterationMs = scheduler.jobStats(jobId)?.avgIterationMs ?? null;
    const limitMs = iterationLimitMs(scheduler.policyInfo().params, avgIterationMs);
    if (limitMs === null) return;
    const startedMs = clock.now();
    timers.set(jobId, clock.setTimeout(() => {
      timers.delete(jobId);
      onHung({ jobId, laneId, elapsedMs: clock.now() - startedMs, limitMs, avgIterationMs });
    }, limitMs));
  };
  const unsubscribe = scheduler.onDidChange((change) => {
    if (change.type === 'grant') arm(change.jobId, change.laneId);
    else if (change.type === 'finish' || (change.type === 'job' && change.change === 'removed')) disarm(change.jobId);
  });
  return () => {
    unsubscribe();
    for (const timer of timers.values()) clock.clearTimeout(timer);
    timers.clear();
  };
}
