/**
 * Admission over one or more GPUs, shared by the service (core/service/admissionQueue.ts) and the simulator
 * (core/sim/simulator.ts): which GPU a waiting job goes to, and the loop that tries every waiting job in
 * arrival order each time room may have appeared. A job goes to a GPU where it fits now (its memory
 * manager's `admit`), the least loaded first, and stays there; a pinned job only to its GPU. It waits while
 * some GPU could hold it once others leave, and is refused only when no GPU could hold it even empty.
 */
import { formatBytes } from '../platform/size.js';
import type { AdmissionResult, JobMemoryRequest, MemoryManager } from './types.js';

/** One GPU admission may place jobs on. */
export interface PlacementTarget {
  /** The GPU's id (`gpu0`, `gpu1`, …). */
  readonly id: string;
  readonly memory: Pick<MemoryManager, 'admit' | 'capacityBytes'> & Partial<Pick<MemoryManager, 'snapshot'>>;
  /** Lanes the policy allows on it now. */
  maxLanes(): number;
  /** Its committed work now; among the GPUs where a job fits, the lowest goes first (ties: the earlier GPU). */
  load(): number;
}

/**
 * A GPU's committed work, as placement compares it: its admitted jobs, then (below 1) the share of its memory
 * committed, so that among GPUs with as many jobs the emptier one comes first.
 */
export function committedLoad(memory: Pick<MemoryManager, 'snapshot'>): number {
  const snapshot = memory.snapshot();
  const committed = snapshot.committedBytes / Math.max(1, snapshot.capacityBytes);
  return snapshot.jobs.length + Math.min(0.999, Math.max(0, committed));
}

/** A job's memory request, and the GPU it is pinned to (`salus run --gpu ID`), if any. */
export interface PlacementRequest extends JobMemoryRequest {
  gpu?: string | null;
  /**
   * Persistent bytes an earlier run measured, for a job that declares none: not reserved (it is counted as
   * it is allocated, and may page), but GPUs with that much free come first.
   */
  expectedPersistentBytes?: number;
}

/** Admission's answer with the GPU it chose. */
export type PlacementResult =
  | { kind: 'admitted'; gpuId: string; laneId: string }
  | { kind: 'wait'; reason: string }
  | { kind: 'refused'; reason: string };

/**
 * Places `request` on one of `targets` (in their given order, which breaks ties). With one target the
 * answer is that GPU's own, word for word. With several: admitted on the least loaded GPU where it fits
 * (those with room for its measured state first);
 * else it waits (the reason of the GPU it would fit best on); refused only when every GPU refuses it, naming
 * the largest. A pin to an unknown GPU is refused naming the GPUs there are.
 */
export function placeJob(request: PlacementRequest, targets: readonly PlacementTarget[]): PlacementResult {
  const { gpu, expectedPersistentBytes, ...memoryRequest } = request;
  let candidates = targets;
  if (gpu !== undefined && gpu !== null) {
    candidates = targets.filter((target) => target.id === gpu);
    if (candidates.length === 0) return { kind: 'refused', reason: `no GPU '${gpu}' here; the GPUs are ${targets.map((t) => t.id).join(', ')}` };
  }
  // Where a measured job's state would not fit beside what is there, it goes last (it may still fit by paging).
  const roomy = (target: PlacementTarget) => !expectedPersistentBytes || (target.memory.snapshot?.().freeBytes ?? Infinity) >= expectedPersistentBytes;
  const ordered = candidates.map((target, index) => ({ target, index, load: target.load(), roomy: roomy(target) }))
    .sort((a, b) => Number(b.roomy) - Number(a.roomy) || a.load - b.load || a.index - b.index);
  const answers: Array<{ target: PlacementTarget; result: Exclude<AdmissionResult, { kind: 'admitted' }> }> = [];
  for (const { target } of ordered) {
    const result = target.memory.admit(memoryRequest, { maxLanes: target.maxLanes() });
    if (result.kind === 'admitted') return { kind: 'admitted', gpuId: target.id, laneId: result.laneId };
    answers.push({ target, result });
  }
  if (targets.length === 1) return answers[0].result;
  const waiting = answers.find((answer) => answer.result.kind === 'wait');
  if (waiting) {
    const where = candidates.length === 1 ? `on ${waiting.target.id}` : 'on every GPU';
    return { kind: 'wait', reason: `no room ${where} now (${waiting.target.id}: ${waiting.result.reason})` };
  }
  const largest = candidates.reduce((a, b) => (b.memory.capacityBytes > a.memory.capacityBytes ? b : a));
  const why = answers.find((answer) => answer.target === largest)!.result.reason;
  const scope = candidates.length === 1 ? `its GPU, ${largest.id}` : `the largest GPU, ${largest.id}`;
  return { kind: 'refused', reason: `${why} (on ${scope}, of ${formatBytes(largest.memory.capacityBytes)})` };
}

/** One waiting job that left the queue, and what admission said. */
export interface AdmissionStep<T> {
  item: T;
  result: PlacementResult;
}

/**
 * The admission loop: tries every item of `waiting` in arrival order (a small job may pass a big one that
 * still waits), takes out of `waiting` those admitted or refused, and returns them in order; `onWait` hears
 * each that stays, with its reason.
 */
export function admitInArrivalOrder<T>(
  waiting: T[],
  place: (item: T) => PlacementResult,
  onWait: (item: T, reason: string) => void = () => undefined,
): Array<AdmissionStep<T>> {
  const steps: Array<AdmissionStep<T>> = [];
  for (const item of [...waiting]) {
    const result = place(item);
    if (result.kind === 'wait') {
      onWait(item, result.reason);
      continue;
    }
    waiting.splice(waiting.indexOf(item), 1);
    steps.push({ item, result });
  }
  return steps;
}
