/**
 * One GPU of the service: its shared device, its own memory manager (ledger,
 * lanes, capacity), its own scheduler (so an iteration on one GPU never waits
 * for another's) and the residency of its jobs' buffers. The service holds one
 * per GPU it opened; admission places each job on one of them
 * (core/memory/placement.ts), where all of its devices live.
 */
import { createMemoryManager, type MemoryManager } from '../memory/memoryManager.js';
import { deviceAllocator } from '../memory/allocator.js';
import { committedLoad, type PlacementTarget } from '../memory/placement.js';
import { createScheduler, type Scheduler, type SchedulerChange } from '../scheduler/index.js';
import { pipelinePoolOf } from '../executor/pipelinePool.js';
import { Residency } from '../executor/residency.js';
import type { OpenedGpu } from '../platform/gpu.js';
import { gpuIdAt } from '../platform/gpuId.js';
import { formatBytes } from '../platform/size.js';
import type { GpuMemoryMap, MemoryMap, PolicyInfo, PolicyName, PolicyParamValue } from '../protocol/state.js';

/** A GPU the service shares, as `salus serve` opened and sized it. */
export interface GpuSetup {
  /** `gpu0`, `gpu1`, … (by default its place in the list). */
  id?: string;
  gpu: OpenedGpu;
  capacityBytes: number;
  capacitySource: string;
}

/** What every GPU of the service shares: the policy it starts under and the log. */
export interface ServiceGpuOptions {
  policy: PolicyName;
  params?: Record<string, PolicyParamValue>;
  log: (line: string) => void;
  /** Whether lane ids carry the GPU's id (`gpu1/lane-1`): so when the service has several GPUs. */
  qualifyLanes: boolean;
}

export class ServiceGpu implements PlacementTarget {
  readonly id: string;
  readonly opened: OpenedGpu;
  readonly memory: MemoryManager;
  readonly scheduler: Scheduler;
  readonly residency: Residency;

  constructor(setup: GpuSetup, index: number, options: ServiceGpuOptions) {
    this.id = setup.id ?? gpuIdAt(index);
    this.opened = setup.gpu;
    this.memory = createMemoryManager({
      capacityBytes: setup.capacityBytes,
      capacitySource: setup.capacitySource,
      allocator: deviceAllocator(setup.gpu.device),
      laneIdPrefix: options.qualifyLanes ? `${this.id}/` : '',
    });
    this.residency = new Residency(this.memory, options.log);
    this.scheduler = createScheduler({ policy: options.policy, params: options.params });
  }

  /** The adapter's name, as the panel and `salus memory` show it. */
  get name(): string {
    return this.opened.name;
  }

  maxLanes(): number {
    return this.scheduler.maxLanes();
  }

  load(): number {
    return committedLoad(this.memory);
  }

  /** What a job's requestDevice is answered with: the limits and features of this GPU's shared device. */
  deviceInfo(): { limits: Record<string, number>; features: string[] } {
    return { limits: this.opened.limits, features: this.opened.info.features };
  }

  /** The GPU's row of the memory map, with the scheduler's word on who runs in each lane. */
  memoryMap(): GpuMemoryMap {
    const map = this.memory.snapshot();
    for (const lane of map.lanes) lane.running = this.scheduler.runningIn(lane.id);
    const pipelines = pipelinePoolOf(this.opened.device);
    return { id: this.id, name: this.name, ...map, keptPipelines: { count: pipelines.size, reused: pipelines.reused } };
  }
}

/** What a job is told about the GPU before it is placed: the adapter's description, limits and features. */
export type WelcomeGpu = Pick<OpenedGpu, 'info' | 'limits' | 'wgslLanguageFeatures'>;

/**
 * What a job may count on wherever it is placed: the first GPU's description with the features and WGSL
 * extensions every GPU has, and each limit at its most restrictive (the least maximum; the largest
 * `min…Alignment`). One GPU's own, when there is one.
 */
export function commonGpu(gpus: readonly ServiceGpu[]): WelcomeGpu {
  const [first, ...others] = gpus.map((gpu) => gpu.opened);
  if (others.length === 0) return first;
  const everywhere = (lists: string[][]) => lists[0].filter((item) => lists.every((list) => list.includes(item)));
  const limits: Record<string, number> = {};
  for (const [key, value] of Object.entries(first.limits)) {
    const values = [value, ...others.map((gpu) => gpu.limits[key] ?? value)];
    limits[key] = key.startsWith('min') ? Math.max(...values) : Math.min(...values);
  }
  return {
    info: { ...first.info, features: everywhere([first, ...others].map((gpu) => gpu.info.features)) },
    limits,
    wgslLanguageFeatures: everywhere([first, ...others].map((gpu) => gpu.wgslLanguageFeatures)),
  };
}

/** A scheduler change on one of the service's GPUs. */
export interface GpuSchedulerChange {
  gpuId: string;
  change: SchedulerChange;
}

/** A line per GPU for the service's log (with its id when there are several), joined by `; `. */
export function describeGpus(gpus: readonly ServiceGpu[]): string {
  return gpus.map((gpu) => {
    const info = gpu.opened.info;
    return `${gpus.length > 1 ? `${gpu.id}: ` : ''}${gpu.name} (${info.backend}${info.isSoftware ? ', software GPU' : ''}), ` +
      `${formatBytes(gpu.memory.capacityBytes)} capacity (${gpu.memory.capacitySource})`;
  }).join('; ');
}

/**
 * Runs a policy change on every GPU's scheduler, the first one first: a bad name or knob throws there,
 * changing nothing anywhere. Returns the first's answer.
 */
export function onEveryScheduler(gpus: readonly ServiceGpu[], change: (scheduler: Scheduler) => PolicyInfo): PolicyInfo {
  const info = change(gpus[0].scheduler);
  for (const gpu of gpus.slice(1)) change(gpu.scheduler);
  return info;
}

/** The memory map of `gpus` (`fill` adds to each job's entry what the service knows), their sums at the top. */
export function gpusMemoryMap(gpus: readonly ServiceGpu[], fill: (gpu: ServiceGpu, entry: GpuMemoryMap['jobs'][number]) => void): MemoryMap {
  const maps = gpus.map((gpu) => {
    const map = gpu.memoryMap();
    for (const entry of map.jobs) fill(gpu, entry);
    return map;
  });
  return { ...sumMemoryMaps(maps), gpus: maps };
}

/** The sums of several GPUs' memory maps (jobs and lanes: all of them, in GPU order); one GPU's is its own. */
function sumMemoryMaps(gpus: readonly GpuMemoryMap[]): Omit<MemoryMap, 'gpus'> {
  if (gpus.length === 1) {
    const { id: _id, name: _name, ...only } = gpus[0];
    return only;
  }
  const sum = (read: (map: GpuMemoryMap) => number) => gpus.reduce((total, map) => total + read(map), 0);
  return {
    capacityBytes: sum((map) => map.capacityBytes),
    usedBytes: sum((map) => map.usedBytes),
    freeBytes: sum((map) => map.freeBytes),
    capacitySource: [...new Set(gpus.map((map) => map.capacitySource))].join(', '),
    committedBytes: sum((map) => map.committedBytes ?? map.usedBytes),
    jobs: gpus.flatMap((map) => map.jobs),
    lanes: gpus.flatMap((map) => map.lanes),
    keptPipelines: { count: sum((map) => map.keptPipelines?.count ?? 0), reused: sum((map) => map.keptPipelines?.reused ?? 0) },
  };
}
