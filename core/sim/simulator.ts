/**
 * The discrete-event simulator behind `salus simulate`: a trace of jobs run in
 * virtual time through the service's own scheduler (`createScheduler`) and memory
 * manager (`createMemoryManager`, over an allocator that allocates nothing), driven
 * as core/service/service.ts drives them. A job arrives and waits in arrival order
 * until admission places it (a small job may pass a big one); once admitted its
 * persistent bytes are allocated and it asks for iterations; each granted iteration
 * allocates its ephemeral bytes in the job's lane, runs `iterationMs`, frees them,
 * and after `gapMs` of CPU time the job asks again. After its last iteration the
 * job leaves, its memory returns and the waiting jobs are tried again. Lanes run
 * side by side, sharing the GPU as `maxSpeedup` says (gpuShare.ts).
 */
import type { BufferAllocator } from '../memory/allocator.js';
import { BufferUsage } from '../memory/allocator.js';
import { createMemoryManager } from '../memory/memoryManager.js';
import type { BufferLease, MemoryManager } from '../memory/types.js';
import type { PolicyName, PolicyParamValue } from '../protocol/state.js';
import { createScheduler, getPolicy, type Scheduler } from '../scheduler/index.js';
import { createGpuShare } from './gpuShare.js';
import type { TraceJob } from './trace.js';
import { createVirtualClock } from './virtualClock.js';

/** How to run a trace. */
export interface SimOptions {
  /** Policy name, as `salus policy` takes it (FIFO when absent). */
  policy?: string;
  /** Knobs of that policy that differ from its defaults. */
  params?: Record<string, PolicyParamValue>;
  /** GPU memory admission hands out; unlimited (every job fits at once) when absent. */
  capacityBytes?: number;
  /**
   * The most the GPU speeds up by running iterations of different lanes at once, ≥ 1:
   * 1 means they only take turns (no gain), absent means each lane runs as if alone.
   */
  maxSpeedup?: number;
}

/** One job's outcome. Times are virtual milliseconds from the trace's start. */
export interface SimJobResult {
  name: string;
  /** `refused`: it could not fit even on an empty GPU (`reason` says why). */
  state: 'done' | 'refused';
  arrivalMs: number;
  /** When admission placed it, or null when refused. */
  admittedMs: number | null;
  finishMs: number | null;
  /** finish − arrival. */
  jctMs: number | null;
  /** Time it waited: for admission, then for grants of its iterations. */
  queuedMs: number | null;
  /** The part of queuedMs spent waiting for admission. */
  admissionWaitMs: number | null;
  /** Σ time its iterations held the GPU (iterationMs each, more when lanes slowed each other). */
  gpuMs: number;
  lane: string | null;
  reason: string | null;
}

/** One policy's run of a trace. */
export interface SimResult {
  policy: PolicyName;
  params: Record<string, PolicyParamValue>;
  capacityBytes: number;
  /** As given; null when unlimited. */
  maxSpeedup: number | null;
  /** Mean JCT of the jobs that ran, or null when none did. */
  avgJctMs: number | null;
  /** Last finish − first arrival, over the jobs that ran (0 when none did). */
  makespanMs: number;
  /** Most lanes that existed at once. */
  peakLanes: number;
  /** Jobs in trace order. */
  jobs: SimJobResult[];
}

/** Capacity that lets every job of any trace fit at once. */
export const UNLIMITED_BYTES = Number.MAX_SAFE_INTEGER;

/** An allocator whose buffers are plain objects: the ledger, lanes and pools are real, the memory is not. */
export function nullAllocator(): BufferAllocator {
  return {
    createBuffer: (descriptor) => ({ size: descriptor.size, usage: descriptor.usage, label: descriptor.label ?? '', destroy() {} }) as unknown as GPUBuffer,
    clearBuffer() {},
  };
}

interface JobRun {
  spec: TraceJob;
  id: string;
  arrivalMs: number;
  admittedMs: number | null;
  finishMs: number | null;
  queuedMs: number | null;
  itersDone: number;
  gpuMs: number;
  lane: string | null;
  reason: string | null;
  ephemeral: BufferLease | null;
}

function allocateOrThrow(memory: MemoryManager, run: JobRun, sizeBytes: number, usage: number, what: string): BufferLease {
  const result = memory.allocate(run.id, { size: sizeBytes, usage, label: what });
  // Admission reserved these bytes; a refusal here is a bug in the memory manager or here, not in the trace.
  if (!result.ok) throw new Error(`simulate: ${run.spec.name}: ${what} of ${sizeBytes} bytes was refused after admission: ${result.message}`);
  return result.lease;
}

/** Runs `trace` under one policy and returns every job's outcome. Deterministic: the same input gives the same result. */
export function simulate(trace: readonly TraceJob[], options: SimOptions = {}): SimResult {
  const policy = getPolicy(options.policy ?? 'FIFO').name;
  const capacityBytes = options.capacityBytes ?? UNLIMITED_BYTES;
  const clock = createVirtualClock();
  let failure: unknown = null;
  const scheduler: Scheduler = createScheduler({ clock, policy, params: options.params, onListenerError: (error) => { failure ??= error; } });
  const memory = createMemoryManager({ capacityBytes, capacitySource: 'simulated', allocator: nullAllocator() });
  const gpu = createGpuShare(clock, options.maxSpeedup ?? Infinity);
  const runs = trace.map((spec, index): JobRun => ({
    spec, id: `job-${index + 1}`, arrivalMs: spec.arrivalS * 1000, admittedMs: null, finishMs: null, queuedMs: null,
    itersDone: 0, gpuMs: 0, lane: null, reason: null, ephemeral: null,
  }));
  const byId = new Map(runs.map((run) => [run.id, run]));
  const waiting: JobRun[] = [];
  let peakLanes = 0;

  const request = (run: JobRun) => void scheduler.requestIteration(run.id);

  /**
   * As the service does: every waiting job, in arrival order, each time something may have freed room. The
   * jobs admitted together ask for their first iterations once all are known to the scheduler, so jobs that
   * arrive at the same moment are ranked together (none is granted before the others exist).
   */
  function admitWaiting(): void {
    const admitted: JobRun[] = [];
    for (const run of [...waiting]) {
      const { persistentBytes, ephemeralBytes } = run.spec;
      const result = memory.admit({ jobId: run.id, persistentBytes, ephemeralBytes }, { maxLanes: scheduler.maxLanes() });
      if (result.kind === 'wait') continue;
      waiting.splice(waiting.indexOf(run), 1);
      if (result.kind === 'refused') {
        run.reason = result.reason;
        continue;
      }
      run.admittedMs = clock.now();
      run.lane = result.laneId;
      peakLanes = Math.max(peakLanes, memory.snapshot().lanes.length);
      if (persistentBytes > 0) allocateOrThrow(memory, run, persistentBytes, BufferUsage.STORAGE | BufferUsage.COPY_DST, 'weights');
      scheduler.addJob({
        id: run.id, laneId: result.laneId, priority: run.spec.priority, itersTotal: run.spec.iterations,
        durationMs: run.spec.durationMs ?? null, share: run.spec.share, submittedAtMs: run.arrivalMs,
      });
      admitted.push(run);
    }
    for (const run of admitted) request(run);
  }

  function endIteration(run: JobRun, elapsedMs: number): void {
    if (run.ephemeral) memory.free(run.ephemeral);
    run.ephemeral = null;
    memory.endIteration(run.id);
    scheduler.finishIteration(run.id, elapsedMs);
    run.itersDone += 1;
    run.gpuMs += elapsedMs;
    if (run.itersDone < run.spec.iterations) {
      if (run.spec.gapMs > 0) clock.setTimeout(() => request(run), run.spec.gapMs);
      else request(run);
      return;
    }
    run.queuedMs = (run.admittedMs! - run.arrivalMs) + scheduler.jobStats(run.id)!.queuedMs;
    run.finishMs = clock.now();
    scheduler.removeJob(run.id);
    memory.release(run.id);
    admitWaiting();
  }

  scheduler.onDidChange((change) => {
    if (change.type !== 'grant') return;
    const run = byId.get(change.jobId)!;
    memory.beginIteration(run.id);
    // STORAGE without COPY_DST is never pooled: the lane holds exactly the declared bytes.
    if (run.spec.ephemeralBytes > 0) run.ephemeral = allocateOrThrow(memory, run, run.spec.ephemeralBytes, BufferUsage.STORAGE, 'activations');
    gpu.start(run, run.spec.iterationMs, (elapsedMs) => endIteration(run, elapsedMs));
  });

  // One event per arrival time: jobs arriving together queue in trace order, then admission sees them all.
  const arrivals = new Map<number, JobRun[]>();
  for (const run of runs) arrivals.set(run.arrivalMs, [...(arrivals.get(run.arrivalMs) ?? []), run]);
  for (const [arrivalMs, arriving] of arrivals) {
    clock.setTimeout(() => {
      waiting.push(...arriving);
      admitWaiting();
    }, arrivalMs);
  }
  const totalIterations = trace.reduce((sum, job) => sum + job.iterations, 0);
  const maxEvents = 10 * (totalIterations + trace.length) + 1000;
  for (let events = 0; clock.runNext(); events++) {
    if (failure) throw failure;
    if (events > maxEvents) throw new Error(`simulate: still running after ${events} events; the scheduler may be stuck`);
  }
  if (failure) throw failure;
  const stuck = runs.filter((run) => run.finishMs === null && run.reason === null);
  if (stuck.length > 0) throw new Error(`simulate: ${stuck.map((run) => run.spec.name).join(', ')} never finished under ${policy}`);
  if (memory.liveBuffers().count !== 0) throw new Error(`simulate: ${memory.liveBuffers().count} buffers still held after every job left`);
  const params = scheduler.policyInfo().params;
  scheduler.dispose();
  return summarize(runs, { policy, params, capacityBytes, maxSpeedup: options.maxSpeedup ?? null, peakLanes });
}

function summarize(runs: readonly JobRun[], head: Pick<SimResult, 'policy' | 'params' | 'capacityBytes' | 'maxSpeedup' | 'peakLanes'>): SimResult {
  const jobs = runs.map((run): SimJobResult => ({
    name: run.spec.name,
    state: run.finishMs === null ? 'refused' : 'done',
    arrivalMs: run.arrivalMs,
    admittedMs: run.admittedMs,
    finishMs: run.finishMs,
    jctMs: run.finishMs === null ? null : run.finishMs - run.arrivalMs,
    queuedMs: run.queuedMs,
    admissionWaitMs: run.admittedMs === null ? null : run.admittedMs - run.arrivalMs,
    gpuMs: run.gpuMs,
    lane: run.lane,
    reason: run.reason,
  }));
  const done = jobs.filter((job) => job.state === 'done');
  const avgJctMs = done.length ? done.reduce((sum, job) => sum + job.jctMs!, 0) / done.length : null;
  const makespanMs = done.length ? Math.max(...done.map((job) => job.finishMs!)) - Math.min(...done.map((job) => job.arrivalMs)) : 0;
  return { ...head, avgJctMs, makespanMs, jobs };
}
