/**
 * What a scheduling policy is: plain code over plain data. A policy ranks the
 * candidate jobs of one lane and says how many lanes admission may open; the
 * scheduler (`scheduler.ts`) does everything else — who is asking, holding a lane
 * for the best job, grants, accounting. Adding a policy is one file in `policies/`
 * plus one line in `policies/registry.ts`.
 */
import type { PolicyKnob, PolicyName, PolicyParamValue } from '../protocol/state.js';

/** A policy's knob values, by knob key. */
export type PolicyParams = Readonly<Record<string, PolicyParamValue>>;

/** What the scheduler knows about one job, as plain data. Times are `Clock` milliseconds. */
export interface SchedJob {
  readonly id: string;
  /** Lane the job is admitted to; its iterations run only there. */
  readonly laneId: string;
  /** Order of `addJob` calls: 0, 1, 2… Breaks every tie, so ranks are deterministic. */
  readonly arrivalSeq: number;
  readonly submittedAtMs: number;
  /** Higher runs first under PRIORITY; 0 unless set. */
  readonly priority: number;
  readonly itersDone: number;
  /** Declared total iterations, or null when unknown. */
  readonly itersTotal: number | null;
  /** Declared GPU time of the whole job (Salus's clients declared run time), or null when undeclared. */
  readonly durationMs: number | null;
  /** Declared weight of the job's GPU time under FAIR (> 0; 1 unless set). */
  readonly share: number;
  /** Moving average of measured iteration GPU time, null before the first iteration. */
  readonly avgIterationMs: number | null;
  /** GPU time of the job's first counted iteration (its warm-up: shader compiles, first uploads), null before it. */
  readonly firstIterationMs: number | null;
  /** Σ measured GPU time of the job's finished iterations. */
  readonly attainedMs: number;
  /** Σ time between requests and their grants, for waits that ended (paused time excluded). */
  readonly queuedMs: number;
  /** When the job's current wait for a grant began, or null when it is not waiting. */
  readonly waitingSinceMs: number | null;
  readonly paused: boolean;
  /** Whether the job has an outstanding `requestIteration`. */
  readonly wantsIteration: boolean;
}

/** A scheduling policy. Every method is pure: same input, same answer. */
export interface Policy {
  readonly name: PolicyName;
  /** Every knob the policy reads, for help text, sliders and validation. */
  readonly knobs: readonly PolicyKnob[];
  /** A value for every knob. */
  readonly defaults: PolicyParams;
  /**
   * Orders the candidate jobs of one lane, best first, as a new array of the same
   * objects. Candidates are the lane's jobs that are neither paused nor running; some
   * may not be asking for an iteration right now (the scheduler decides what that means).
   */
  rank(jobs: readonly SchedJob[], params: PolicyParams, nowMs: number): SchedJob[];
  /** How many lanes admission may open side by side. */
  maxLanes(params: PolicyParams): number;
}
