/**
 * A deterministic job simulator for scheduler tests: each simulated job asks for an
 * iteration, runs `gpuMs` on the fake clock once granted, finishes, does `cpuMs` of
 * "CPU work", asks again, and removes itself after `iters` iterations — the loop the
 * executor drives for a real job. Grants are observed through `onDidChange`, which is
 * synchronous, so the whole run happens inside `clock.advance()`.
 */
import { createFakeClock, type FakeClock } from '../../../core/scheduler/clock.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from '../../../core/scheduler/scheduler.js';

export interface SimJob {
  id: string;
  laneId?: string;
  /** GPU time of each iteration. */
  gpuMs: number;
  /** Time between finishing an iteration and asking for the next (0: asks at once). */
  cpuMs?: number;
  /** Iterations to run before leaving; runs forever when absent. */
  iters?: number;
  /** Declare `iters` to the scheduler as itersTotal (default true). */
  declareTotal?: boolean;
  priority?: number;
  /** When the job is added and first asks. */
  startAtMs?: number;
}

export interface Grant {
  atMs: number;
  jobId: string;
  laneId: string;
}

export interface Sim {
  clock: FakeClock;
  scheduler: Scheduler;
  grants: Grant[];
  /** When each job left after its last iteration. */
  doneAtMs: Map<string, number>;
  /** Job ids of the grants, in order. */
  order(): string[];
  /** `order()` with runs of the same job collapsed: `AAABB` → `A B`. */
  runs(): string[];
}

/** Starts the simulated jobs on a fresh fake clock and scheduler; nothing runs until `clock.advance`. */
export function simulate(jobs: SimJob[], options: Omit<SchedulerOptions, 'clock'> = {}): Sim {
  const clock = createFakeClock();
  const scheduler = createScheduler({ ...options, clock });
  const grants: Grant[] = [];
  const doneAtMs = new Map<string, number>();
  const byId = new Map(jobs.map((j) => [j.id, j]));

  scheduler.onDidChange((change) => {
    if (change.type !== 'grant') return;
    const spec = byId.get(change.jobId);
    if (!spec) return;
    grants.push({ atMs: clock.now(), jobId: change.jobId, laneId: change.laneId });
    clock.setTimeout(() => finish(spec), spec.gpuMs);
  });

  function finish(spec: SimJob): void {
    if (!scheduler.jobStats(spec.id)) return; // removed by the test mid-iteration
    scheduler.finishIteration(spec.id, spec.gpuMs);
    if (spec.iters !== undefined && scheduler.jobStats(spec.id)!.itersDone >= spec.iters) {
      scheduler.removeJob(spec.id);
      doneAtMs.set(spec.id, clock.now());
      return;
    }
    const ask = () => {
      const stats = scheduler.jobStats(spec.id);
      if (stats && !stats.running) void scheduler.requestIteration(spec.id);
    };
    if (spec.cpuMs) clock.setTimeout(ask, spec.cpuMs);
    else ask();
  }

  for (const spec of jobs) {
    clock.setTimeout(() => {
      scheduler.addJob({
        id: spec.id,
        laneId: spec.laneId ?? 'lane-0',
        priority: spec.priority,
        itersTotal: spec.declareTotal === false ? null : spec.iters ?? null,
      });
      void scheduler.requestIteration(spec.id);
    }, spec.startAtMs ?? 0);
  }

  const order = () => grants.map((g) => g.jobId);
  const runs = () => order().filter((id, i, all) => i === 0 || all[i - 1] !== id);
  return { clock, scheduler, grants, doneAtMs, order, runs };
}

/** Lets promise callbacks run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
