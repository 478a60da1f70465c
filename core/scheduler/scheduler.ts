/**
 * The iteration scheduler (SALUS-NOTES.md, "Iteration scheduling"). Jobs ask for
 * their next iteration; the scheduler grants at most one iteration per lane at a
 * time and picks, at every boundary, the job the policy ranks best. Boundaries are:
 * a lane idle when a job asks, an iteration finishing, a hold running out, and
 * changes to jobs or the policy while a lane is idle. A running iteration is never
 * preempted. Pure logic: time and timers come from a `Clock`.
 *
 * Past 450 lines on purpose: the boundaries, the holds and the policy's ranking
 * are one piece of logic that must be read together; each policy's own order is
 * in policies/, the watchdog and attained time in files beside this one.
 */
import type { PolicyInfo, PolicyName, PolicyParamValue } from '../protocol/state.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { applyParams } from './params.js';
import type { Policy, PolicyParams, SchedJob } from './policy.js';
import { getPolicy } from './policies/registry.js';

/**
 * Weight of the newest iteration in `avgIterationMs`, an exponential moving average
 * that follows a job whose iterations change speed. The first iteration is a warm-up
 * (shader compiles, first uploads: often many times a step's length) and seeds it only
 * until the second replaces it, so a short job is not ranked as long for its first ~20.
 */
export const ITERATION_EMA_WEIGHT = 0.2;

/** What `Scheduler.onDidChange` listeners hear, after the change is complete. */
export type SchedulerChange =
  | { type: 'grant'; jobId: string; laneId: string; /** This wait, request to grant. */ waitedMs: number }
  | { type: 'finish'; jobId: string; laneId: string; gpuMs: number }
  /** A granted iteration ended without finishing: its job was removed (killed, crashed) mid-iteration. */
  | { type: 'abort'; jobId: string; laneId: string }
  | { type: 'policy'; policy: PolicyInfo }
  | { type: 'job'; jobId: string; change: 'added' | 'removed' | 'paused' | 'resumed' | 'priority' | 'total' | 'declared' | 'lane' };

/** Per-job counters, for `salus jobs` and the panel. */
export interface JobStats {
  itersDone: number;
  attainedMs: number;
  /** Σ time waiting for grants, including the wait in progress (paused time excluded). */
  queuedMs: number;
  avgIterationMs: number | null;
  /** Whether an iteration of the job is granted and not finished. */
  running: boolean;
}

/** What `addJob` needs; the rest starts at zero. */
export interface NewJob {
  id: string;
  laneId: string;
  priority?: number;
  itersTotal?: number | null;
  /** Declared GPU time of the whole job; null (the default) when undeclared. */
  durationMs?: number | null;
  /** Weight of its GPU time under FAIR, > 0; 1 by default. */
  share?: number;
  /** Defaults to `clock.now()`. */
  submittedAtMs?: number;
}

/** The pending request of a removed job rejects with this. */
export class JobRemovedError extends Error {
  constructor(readonly jobId: string, reason = 'removed from the scheduler') {
    super(`Job ${jobId} was ${reason} while waiting for an iteration`);
    this.name = 'JobRemovedError';
  }
}

export interface SchedulerOptions {
  clock?: Clock;
  /** FIFO when absent. */
  policy?: PolicyName;
  /** Knobs of that policy that differ from its defaults. */
  params?: Record<string, PolicyParamValue>;
  /**
   * Hears what an `onDidChange` listener threw. By default the error is rethrown from
   * a microtask: it surfaces as an uncaught exception instead of failing the scheduler
   * call (e.g. rejecting a request that was in fact queued).
   */
  onListenerError?: (error: unknown) => void;
}

function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/** The iteration scheduler. Methods throw Error on an unknown job id unless noted. */
export interface Scheduler {
  /** Adds a job, not asking yet. Throws if the id is taken. */
  addJob(job: NewJob): void;
  /**
   * Forgets a job (unknown ids are ignored). A running iteration of it frees its lane
   * at once; a pending request rejects with `JobRemovedError`, already marked handled
   * so a caller may drop the promise without an unhandled-rejection crash.
   */
  removeJob(id: string): void;
  /** Moves a job to another lane. A running iteration finishes in its old lane. */
  setLane(id: string, laneId: string): void;
  /**
   * Resolves when the job may run its next iteration in its lane. Calling again while
   * a request is pending returns the same promise; calling while the job's iteration
   * runs rejects (finish it first).
   */
  requestIteration(id: string): Promise<void>;
  /**
   * The job's granted iteration is done; `gpuMs` is its measured time. Frees the lane
   * and grants the next. Ignored for a job no longer known (removed mid-iteration);
   * throws for a known job with no running iteration. With `counted: false` the grant
   * was GPU work that is not one of the job's iterations (an SDK job's work outside the
   * iterations it marks): its time counts as attained, but not as an iteration done nor
   * in the job's average.
   */
  finishIteration(id: string, gpuMs: number, options?: { counted?: boolean }): void;
  /** A paused job is never granted; an iteration of it already running finishes first. */
  pause(id: string): void;
  resume(id: string): void;
  setPriority(id: string, priority: number): void;
  setTotal(id: string, itersTotal: number | null): void;
  /** Changes what the job declared besides its total: its run time (null: undeclared) and its FAIR share (> 0). */
  setDeclared(id: string, declared: { durationMs?: number | null; share?: number }): void;
  /**
   * Switches policy, live. `params` apply on top of what that policy had last (its
   * defaults the first time); knobs not given are kept. Running iterations are never
   * preempted: the new policy decides from the next boundary on. Throws, changing
   * nothing, on an unknown name or a bad knob.
   */
  setPolicy(name: PolicyName, params?: Record<string, PolicyParamValue>): PolicyInfo;
  /** Changes knobs of the current policy. Unknown key or bad value: throws, changing nothing. */
  setParams(params: Record<string, PolicyParamValue>): PolicyInfo;
  policyInfo(): PolicyInfo;
  /** How many lanes admission may open under the current policy. */
  maxLanes(): number;
  jobStats(id: string): JobStats | undefined;
  /** Id of the job whose iteration runs in the lane, or null. */
  runningIn(laneId: string): string | null;
  /**
   * Calls `listener` after every change (grants, finishes, policy and job changes),
   * once the scheduler's state is consistent, so a listener may call back in. A
   * listener that throws stops neither the others nor the operation; its error goes
   * to `options.onListenerError`. Returns a function that stops the listener.
   */
  onDidChange(listener: (change: SchedulerChange) => void): () => void;
  /** Clears timers and listeners and rejects pending requests; the scheduler is unusable after. */
  dispose(): void;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface JobEntry extends Mutable<SchedJob> {
  /** When the job last stopped asking (added, finished an iteration, resumed idle): a hold lasts from here. */
  idleSinceMs: number;
  /** Lane where an iteration of the job is granted and not finished, else null. */
  runningLane: string | null;
  pending: { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } | null;
}

interface LaneRecord {
  jobs: Set<string>;
  running: string | null;
  hold: TimerHandle | null;
}

/** A scheduler on `options.clock` (the system clock by default) under `options.policy`. */
export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const clock = options.clock ?? systemClock;
  const onListenerError = options.onListenerError ?? rethrowLater;
  const jobs = new Map<string, JobEntry>();
  const lanes = new Map<string, LaneRecord>();
  const listeners = new Set<(change: SchedulerChange) => void>();
  const queue: SchedulerChange[] = [];
  /** Knobs each policy had last, so switching back restores them. */
  const paramsByPolicy = new Map<PolicyName, PolicyParams>();
  let policy: Policy = getPolicy(options.policy ?? 'FIFO');
  let params: PolicyParams = applyParams(policy, policy.defaults, options.params ?? {});
  paramsByPolicy.set(policy.name, params);
  let arrivals = 0;
  let flushing = false;
  let disposed = false;

  function job(id: string): JobEntry {
    const found = jobs.get(id);
    if (!found) throw new Error(`Unknown job "${id}"`);
    return found;
  }

  function lane(laneId: string): LaneRecord {
    let found = lanes.get(laneId);
    if (!found) lanes.set(laneId, (found = { jobs: new Set(), running: null, hold: null }));
    return found;
  }

  function dropLaneIfEmpty(laneId: string): void {
    const found = lanes.get(laneId);
    if (found && found.jobs.size === 0 && found.running === null && found.hold === null) lanes.delete(laneId);
  }

  function info(): PolicyInfo {
    return { name: policy.name, params: { ...params }, knobs: policy.knobs.map((k) => ({ ...k })) };
  }

  /** Delivers queued changes once state is consistent; listeners may call back in. */
  function flush(): void {
    if (flushing) return;
    flushing = true;
    try {
      for (let change = queue.shift(); change; change = queue.shift()) {
        for (const listener of [...listeners]) {
          try {
            listener(change);
          } catch (error) {
            onListenerError(error);
          }
        }
      }
    } finally {
      flushing = false;
    }
  }

  function stopWaiting(rec: JobEntry, nowMs: number): number {
    if (rec.waitingSinceMs === null) return 0;
    const waitedMs = Math.max(0, nowMs - rec.waitingSinceMs);
    rec.queuedMs += waitedMs;
    rec.waitingSinceMs = null;
    return waitedMs;
  }

  function grant(rec: JobEntry, laneId: string, nowMs: number): void {
    const pending = rec.pending!;
    const waitedMs = stopWaiting(rec, nowMs);
    rec.pending = null;
    rec.wantsIteration = false;
    rec.runningLane = laneId;
    lane(laneId).running = rec.id;
    queue.push({ type: 'grant', jobId: rec.id, laneId, waitedMs });
    pending.resolve();
  }

  /**
   * A boundary in `laneId`: if it is idle, grant the best-ranked asking job — unless,
   * with workConserving off, a better-ranked job stopped asking less than holdMs ago;
   * then wait for it until its hold runs out (a timer re-runs this).
   */
  function schedule(laneId: string): void {
    const found = lanes.get(laneId);
    if (!found || found.running !== null || disposed) return;
    if (found.hold !== null) {
      clock.clearTimeout(found.hold);
      found.hold = null;
    }
    const candidates: JobEntry[] = [];
    for (const id of found.jobs) {
      const rec = jobs.get(id)!;
      if (!rec.paused && rec.runningLane === null) candidates.push(rec);
    }
    if (!candidates.some((rec) => rec.wantsIteration)) {
      dropLaneIfEmpty(laneId);
      return;
    }
    const nowMs = clock.now();
    const holdMs = params.workConserving === true ? 0 : Number(params.holdMs ?? 0);
    for (const ranked of policy.rank(candidates, params, nowMs)) {
      const rec = jobs.get(ranked.id);
      if (!rec || !candidates.includes(rec)) continue;
      if (rec.wantsIteration) {
        grant(rec, laneId, nowMs);
        return;
      }
      // A job that has run all its declared iterations is finishing, not between iterations: hold for no one.
      if (rec.itersTotal !== null && rec.itersDone >= rec.itersTotal) continue;
      const holdUntilMs = rec.idleSinceMs + holdMs;
      if (nowMs < holdUntilMs) {
        found.hold = clock.setTimeout(() => {
          found.hold = null;
          schedule(laneId);
          flush();
        }, holdUntilMs - nowMs);
        return;
      }
    }
  }

  function scheduleAll(): void {
    for (const laneId of [...lanes.keys()]) schedule(laneId);
  }

  /** Runs a public operation, then tells listeners. */
  function act<T>(operation: () => T): T {
    if (disposed) throw new Error('Scheduler is disposed');
    const result = operation();
    flush();
    return result;
  }

  function checkCount(what: string, value: number | null, allowNull: boolean): void {
    if (value === null && allowNull) return;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`${what} must be a finite number, got ${value}`);
  }

  function checkShare(share: number): void {
    if (!(typeof share === 'number' && Number.isFinite(share) && share > 0)) throw new Error(`share must be a finite number above 0, got ${share}`);
  }

  return {
    addJob: (spec) => act(() => {
      if (jobs.has(spec.id)) throw new Error(`Job "${spec.id}" already exists`);
      const itersTotal = spec.itersTotal ?? null;
      checkCount('itersTotal', itersTotal, true);
      const priority = spec.priority ?? 0;
      checkCount('priority', priority, false);
      const durationMs = spec.durationMs ?? null;
      checkCount('durationMs', durationMs, true);
      const share = spec.share ?? 1;
      checkShare(share);
      const nowMs = clock.now();
      jobs.set(spec.id, {
        id: spec.id, laneId: spec.laneId, arrivalSeq: arrivals++, submittedAtMs: spec.submittedAtMs ?? nowMs,
        priority, itersDone: 0, itersTotal, durationMs, share, avgIterationMs: null, firstIterationMs: null, attainedMs: 0, queuedMs: 0,
        waitingSinceMs: null, paused: false, wantsIteration: false,
        idleSinceMs: nowMs, runningLane: null, pending: null,
      });
      lane(spec.laneId).jobs.add(spec.id);
      queue.push({ type: 'job', jobId: spec.id, change: 'added' });
      schedule(spec.laneId);
    }),

    removeJob: (id) => act(() => {
      const rec = jobs.get(id);
      if (!rec) return;
      jobs.delete(id);
      lanes.get(rec.laneId)?.jobs.delete(id);
      const freed = rec.runningLane;
      if (freed !== null) {
        lane(freed).running = null;
        queue.push({ type: 'abort', jobId: id, laneId: freed });
      }
      if (rec.pending) rec.pending.reject(new JobRemovedError(id));
      queue.push({ type: 'job', jobId: id, change: 'removed' });
      schedule(rec.laneId);
      if (freed !== null && freed !== rec.laneId) schedule(freed);
      dropLaneIfEmpty(rec.laneId);
    }),

    setLane: (id, laneId) => act(() => {
      const rec = job(id);
      const from = rec.laneId;
      if (from === laneId) return;
      lanes.get(from)?.jobs.delete(id);
      rec.laneId = laneId;
      lane(laneId).jobs.add(id);
      queue.push({ type: 'job', jobId: id, change: 'lane' });
      schedule(from);
      schedule(laneId);
    }),

    requestIteration(id) {
      try {
        return act(() => {
          const rec = job(id);
          if (rec.runningLane !== null) throw new Error(`Job "${id}" asked for an iteration while one runs; finish it first`);
          if (rec.pending) return rec.pending.promise;
          let resolve!: () => void;
          let reject!: (error: Error) => void;
          const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
          // Marked handled: a removed job's caller may drop the promise (see removeJob).
          promise.catch(() => undefined);
          rec.pending = { promise, resolve, reject };
          rec.wantsIteration = true;
          rec.waitingSinceMs = rec.paused ? null : clock.now();
          schedule(rec.laneId);
          return promise;
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },

    finishIteration: (id, gpuMs, options) => act(() => {
      const rec = jobs.get(id);
      if (!rec) return;
      if (rec.runningLane === null) throw new Error(`Job "${id}" finished an iteration it was not granted`);
      if (!(Number.isFinite(gpuMs) && gpuMs >= 0)) throw new Error(`gpuMs must be a finite number >= 0, got ${gpuMs}`);
      const laneId = rec.runningLane;
      lane(laneId).running = null;
      rec.runningLane = null;
      rec.attainedMs += gpuMs;
      if (options?.counted !== false) {
        rec.itersDone += 1;
        rec.firstIterationMs ??= gpuMs;
        rec.avgIterationMs = rec.avgIterationMs === null || rec.itersDone === 2
          ? gpuMs
          : rec.avgIterationMs + ITERATION_EMA_WEIGHT * (gpuMs - rec.avgIterationMs);
      }
      rec.idleSinceMs = clock.now();
      queue.push({ type: 'finish', jobId: id, laneId, gpuMs });
      schedule(laneId);
      if (rec.laneId !== laneId) schedule(rec.laneId);
    }),

    pause: (id) => act(() => {
      const rec = job(id);
      if (rec.paused) return;
      rec.paused = true;
      stopWaiting(rec, clock.now());
      queue.push({ type: 'job', jobId: id, change: 'paused' });
      schedule(rec.laneId);
    }),

    resume: (id) => act(() => {
      const rec = job(id);
      if (!rec.paused) return;
      rec.paused = false;
      const nowMs = clock.now();
      if (rec.wantsIteration) rec.waitingSinceMs = nowMs;
      else if (rec.runningLane === null) rec.idleSinceMs = nowMs;
      queue.push({ type: 'job', jobId: id, change: 'resumed' });
      schedule(rec.laneId);
    }),

    setPriority: (id, priority) => act(() => {
      checkCount('priority', priority, false);
      const rec = job(id);
      rec.priority = priority;
      queue.push({ type: 'job', jobId: id, change: 'priority' });
      schedule(rec.laneId);
    }),

    setTotal: (id, itersTotal) => act(() => {
      checkCount('itersTotal', itersTotal, true);
      const rec = job(id);
      rec.itersTotal = itersTotal;
      queue.push({ type: 'job', jobId: id, change: 'total' });
      schedule(rec.laneId);
    }),

    setDeclared: (id, declared) => act(() => {
      if (declared.durationMs !== undefined) checkCount('durationMs', declared.durationMs, true);
      if (declared.share !== undefined) checkShare(declared.share);
      const rec = job(id);
      if (declared.durationMs !== undefined) rec.durationMs = declared.durationMs;
      if (declared.share !== undefined) rec.share = declared.share;
      queue.push({ type: 'job', jobId: id, change: 'declared' });
      schedule(rec.laneId);
    }),

    setPolicy: (name, changes = {}) => act(() => {
      const next = getPolicy(name);
      const nextParams = applyParams(next, paramsByPolicy.get(next.name) ?? next.defaults, changes);
      policy = next;
      params = nextParams;
      paramsByPolicy.set(policy.name, params);
      queue.push({ type: 'policy', policy: info() });
      scheduleAll();
      return info();
    }),

    setParams: (changes) => act(() => {
      params = applyParams(policy, params, changes);
      paramsByPolicy.set(policy.name, params);
      queue.push({ type: 'policy', policy: info() });
      scheduleAll();
      return info();
    }),

    policyInfo: info,
    maxLanes: () => policy.maxLanes(params),

    jobStats(id) {
      const rec = jobs.get(id);
      if (!rec) return undefined;
      const waitingMs = rec.waitingSinceMs === null ? 0 : Math.max(0, clock.now() - rec.waitingSinceMs);
      return {
        itersDone: rec.itersDone,
        attainedMs: rec.attainedMs,
        queuedMs: rec.queuedMs + waitingMs,
        avgIterationMs: rec.avgIterationMs,
        running: rec.runningLane !== null,
      };
    },

    runningIn: (laneId) => lanes.get(laneId)?.running ?? null,

    onDidChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    dispose() {
      if (disposed) return;
      disposed = true;
      for (const found of lanes.values()) if (found.hold !== null) clock.clearTimeout(found.hold);
      for (const rec of jobs.values()) rec.pending?.reject(new JobRemovedError(rec.id, 'dropped by a disposed scheduler'));
      jobs.clear();
      lanes.clear();
      listeners.clear();
      queue.length = 0;
    },
  };
}
