/**
 * The discrete-event simulator behind `salus simulate`: a trace of jobs run in
 * virtual time through the service's own scheduler (`createScheduler`) and memory
 * manager (`createMemoryManager`, over an allocator that allocates nothing), one of
 * each per simulated GPU, driven as core/service/service.ts drives them. A job
 * arrives and waits in arrival order until admission places it on a GPU, by the
 * admission loop the service runs (core/memory/placement.ts: a small job may pass
 * a big one; the least loaded GPU where it fits); once admitted its
 * persistent bytes are allocated and it asks for iterations; each granted iteration
 * allocates its ephemeral bytes in the job's lane, runs `iterationMs`, frees them,
 * and after `gapMs` of CPU time the job asks again. After its last iteration the
 * job leaves, its memory returns and the waiting jobs are tried again. Lanes run
 * side by side, sharing their GPU as `maxSpeedup` says (gpuShare.ts); GPUs do not
 * slow each other.
 */
import type { BufferAllocator } from '../memory/allocator.js';
import { BufferUsage } from '../memory/allocator.js';
import { createMemoryManager } from '../memory/memoryManager.js';
import { admitInArrivalOrder, committedLoad, placeJob, type PlacementTarget } from '../memory/placement.js';
import type { BufferLease, MemoryManager } from '../memory/types.js';
import type { PolicyName, PolicyParamValue } from '../protocol/state.js';
import { createScheduler, getPolicy, type Scheduler } from '../scheduler/index.js';
import { createGpuShare, type GpuShare } from './gpuShare.js';
import type { TraceJob } from './trace.js';
import { createVirtualClock } from './virtualClock.js';

/** How to run a trace. */
export interface SimOptions {
  /** Policy name, as `salus policy` takes it (FIFO when absent). */
  policy?: string;
  /** Knobs of that policy that differ from its defaults. */
  params?: Record<string, PolicyParamValue>;
  /** GPU memory admission hands out, on each GPU; unlimited (every job fits at once) when absent. */
  capacityBytes?: number;
  /** How many GPUs, each of `capacityBytes` with its own lanes and scheduler (1 when absent). */
  gpus?: number;
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
  /** The GPU it ran on (`gpu0`, …), or null when refused. */
  gpu: string | null;
  reason: string | null;
}

/** One policy's run of a trace. */
export interface SimResult {
  policy: PolicyName;
  params: Record<string, PolicyParamValue>;
  capacityBytes: number;
  /** How many GPUs it ran on. */
  gpus: number;
  /** As given; null when unlimited. */
  maxSpeedup: number | null;
  /** Mean JCT of the jobs that ran, or null when none did. */
  avgJctMs: number | null;
  /** Last finish − first arrival, over the jobs that ran (0 when none did). */
  makespanMs: number;
  /** Most lanes that existed at once, over all GPUs. */
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
  gpu: SimGpu | null;
  reason: string | null;
  ephemeral: BufferLease | null;
}

/** One simulated GPU: a memory manager, a scheduler and the way its lanes share it. */
interface SimGpu extends PlacementTarget {
  memory: MemoryManager;
  scheduler: Scheduler;
  share: GpuShare;
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
  const gpuCount = options.gpus ?? 1;
  if (!(Number.isInteger(gpuCount) && gpuCount >= 1)) throw new Error(`simulate: the number of GPUs must be a whole number of at least 1, got ${gpuCount}`);
  const clock = createVirtualClock();
  let failure: unknown = null;
  const gpus = Array.from({ length: gpuCount }, (_, index): SimGpu => {
    const scheduler = createScheduler({ clock, policy, params: options.params, onListenerError: (error) => { failure ??= error; } });
    const memory = createMemoryManager({ capacityBytes, capacitySource: 'simulated', allocator: nullAllocator(), laneIdPrefix: gpuCount > 1 ? `gpu${index}/` : '' });
    return {
      id: `gpu${index}`, memory, scheduler, share: createGpuShare(clock, options.maxSpeedup ?? Infinity),
      maxLanes: () => scheduler.maxLanes(),
      load: () => committedLoad(memory),
    };
  });
  const runs = trace.map((spec, index): JobRun => ({
    spec, id: `job-${index + 1}`, arrivalMs: spec.arrivalS * 1000, admittedMs: null, finishMs: null, queuedMs: null,
    itersDone: 0, gpuMs: 0, lane: null, gpu: null, reason: null, ephemeral: null,
  }));
  const byId = new Map(runs.map((run) => [run.id, run]));
  const waiting: JobRun[] = [];
  let peakLanes = 0;

  const request = (run: JobRun) => void run.gpu!.scheduler.requestIteration(run.id);

  /**
   * The service's admission loop, each time something may have freed room. The jobs admitted together ask
   * for their first iterations once all are known to their schedulers, so jobs that arrive at the same moment
   * are ranked together (none is granted before the others exist).
   */
  function admitWaiting(): void {
    const steps = admitInArrivalOrder(waiting, (run) => placeJob({ jobId: run.id, persistentBytes: run.spec.persistentBytes, ephemeralBytes: run.spec.ephemeralBytes }, gpus));
    const admitted: JobRun[] = [];
    for (const { item: run, result } of steps) {
      if (result.kind !== 'admitted') {
        run.reason = result.reason;
        continue;
      }
      const gpu = gpus.find((candidate) => candidate.id === result.gpuId)!;
      run.admittedMs = clock.now();
      run.lane = result.laneId;
      run.gpu = gpu;
      peakLanes = Math.max(peakLanes, gpus.reduce((lanes, each) => lanes + each.memory.snapshot().lanes.length, 0));
      if (run.spec.persistentBytes > 0) allocateOrThrow(gpu.memory, run, run.spec.persistentBytes, BufferUsage.STORAGE | BufferUsage.COPY_DST, 'weights');
      gpu.scheduler.addJob({
        id: run.id, laneId: result.laneId, priority: run.spec.priority, itersTotal: run.spec.iterations,
        durationMs: run.spec.durationMs ?? null, share: run.spec.share, submittedAtMs: run.arrivalMs,
      });
      admitted.push(run);
    }
    for (const run of admitted) request(run);
  }

  function endIteration(run: JobRun, elapsedMs: number): void {
    const { memory, scheduler } = run.gpu!;
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

  for (const gpu of gpus) {
    gpu.scheduler.onDidChange((change) => {
      if (change.type !== 'grant') return;
      const run = byId.get(change.jobId)!;
      gpu.memory.beginIteration(run.id);
      // STORAGE without COPY_DST is never pooled: the lane holds exactly the declared bytes.
      if (run.spec.ephemeralBytes > 0) run.ephemeral = allocateOrThrow(gpu.memory, run, run.spec.ephemeralBytes, BufferUsage.STORAGE, 'activations');
      gpu.share.start(run, run.spec.iterationMs, (elapsedMs) => endIteration(run, elapsedMs));
    });
  }

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
  const held = gpus.reduce((count, gpu) => count + gpu.memory.liveBuffers().count, 0);
  if (held !== 0) throw new Error(`simulate: ${held} buffers still held after every job left`);
  const params = gpus[0].scheduler.policyInfo().params;
  for (const gpu of gpus) gpu.scheduler.dispose();
  return summarize(runs, { policy, params, capacityBytes, gpus: gpuCount, maxSpeedup: options.maxSpeedup ?? null, peakLanes });
}

function summarize(runs: readonly JobRun[], head: Pick<SimResult, 'policy' | 'params' | 'capacityBytes' | 'gpus' | 'maxSpeedup' | 'peakLanes'>): SimResult {
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
    gpu: run.gpu?.id ?? null,
    reason: run.reason,
  }));
  const done = jobs.filter((job) => job.state === 'done');
  const avgJctMs = done.length ? done.reduce((sum, job) => sum + job.jctMs!, 0) / done.length : null;
  const makespanMs = done.length ? Math.max(...done.map((job) => job.finishMs!)) - Math.min(...done.map((job) => job.arrivalMs)) : 0;
  return { ...head, avgJctMs, makespanMs, jobs };
}
