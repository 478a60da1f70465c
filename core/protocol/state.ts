/**
 * The service's observable state, as plain JSON: what `salus jobs|memory|policy --json`
 * print, what `/api/*` answers, and what the panel renders. Shapes follow DESIGN.md's
 * "JSON shapes" contract; fields may be added, never renamed.
 */

/** Lifecycle of a job: `queued → running ⇄ paused → done | failed | killed`. */
export type JobState = 'queued' | 'running' | 'paused' | 'done' | 'failed' | 'killed';

/** States from which a job never leaves. */
export const FINAL_STATES: readonly JobState[] = ['done', 'failed', 'killed'];

/** What a job may declare up front (Salus's client hints). Every field is optional. */
export interface JobHints {
  /** Total iterations the job will run, if known (drives SRTF and the ETA). */
  iterations?: number;
  /** Bytes of model state that stay resident between iterations. */
  persistentBytes?: number;
  /** Peak bytes allocated and released inside one iteration. */
  ephemeralBytes?: number;
  /** Higher runs first under PRIORITY; default 0. */
  priority?: number;
  /** GPU time the whole job will take, in milliseconds, if known (Salus's clients declared it; drives SRTF until measured). */
  durationMs?: number;
  /** Weight of the job's GPU time under FAIR, above 0; default 1 (shares 3 and 1: 3/4 and 1/4 of the GPU). */
  share?: number;
  /** The GPU the job must run on (`salus run --gpu ID`, e.g. `gpu1`); absent: wherever it fits. Read at admission only. */
  gpu?: string;
}

/** One row of `salus jobs --json`. Times are epoch milliseconds; null until they happen. */
export interface JobInfo {
  id: string;
  name: string;
  state: JobState;
  priority: number;
  iterations: { done: number; total: number | null };
  memory: {
    /** Bytes of persistent buffers the job holds now (exact, from the ledger). */
    persistentBytes: number;
    /** Largest ephemeral bytes seen inside one iteration (or declared, before any ran). */
    ephemeralPeakBytes: number;
  } & Partial<JobMemoryUse>;
  /** Lane the job is admitted to, or null while queued or after it ends. */
  lane: string | null;
  /** The GPU the job was placed on (`gpu0`, `gpu1`, …), kept after it ends; null while it waits. Always set by the service. */
  gpu?: string | null;
  submittedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Mean time of one iteration in milliseconds, null before the first. */
  avgIterationMs: number | null;
  /** Total GPU time granted to the job's iterations, in milliseconds. */
  attainedMs: number;
  /** Total time spent waiting for a lane grant, in milliseconds. */
  queuedMs: number;
  /** Weight of the job's GPU time under FAIR (its declared `share`, 1 unless set). Always set by the service. */
  share?: number;
  /**
   * The job's part of the GPU time received by the jobs live now (queued, running, paused), 0..1; null once
   * it has ended or while no live job has received any. Always set by the service.
   */
  attainedFraction?: number | null;
  /** Why the job failed or was refused; null otherwise. */
  error: string | null;
  /** Operating-system process id of the job, when known. */
  pid: number | null;
  /** Whether iterations are marked by the job (`sdk`) or inferred from sync points. */
  iterationSource: 'sdk' | 'inferred';
  /**
   * GPU errors of the job's work that none of its error scopes captured (validation, out of memory,
   * internal), and the first of them. A job that ended `done` with a count above 0 may have computed
   * a wrong result: its program ignored errors it never saw. Always set by the service.
   */
  gpuErrors?: GpuErrorTally;
  /**
   * Set on jobs of an earlier run of the service, kept by its history (core/history): they ended
   * before this service started, or were lost with it (`failed`, with the reason in `error`).
   */
  fromEarlierRun?: boolean;
  /** Which start of the service ran the job, when it keeps a history (1, 2, …, per data folder). */
  runId?: number;
}

/**
 * Where a job's memory is and what its iterations use, measured by the service (always set by it; 0 for an
 * ended job and before the first iteration finished).
 */
export interface JobMemoryUse {
  /** Bytes of real GPU buffers the job holds now. */
  residentBytes: number;
  /** Bytes of the job's buffers whose contents wait in host memory, off the GPU (0 until paging exists). */
  pagedOutBytes: number;
  /**
   * Persistent bytes it held as its last iteration's memory ended (after the frees that follow it): its state
   * between iterations as measured (weights, optimizer state, what it keeps), whatever it declared. 0 before the first.
   */
  stateBytes: number;
  /** Bytes of the job's buffers its last finished iteration touched (bound, copied, written, mapped). */
  workingSetBytes: number;
  /** Of those, buffers it read before writing, that existed before it began: what must survive between iterations (weights, optimizer state). */
  liveInBytes: number;
  /** Of those, buffers it provably overwrote whole before reading: their old contents were dead. */
  writtenFirstBytes: number;
}

/** How many uncaptured GPU errors a job raised, and the first one. */
export interface GpuErrorTally {
  count: number;
  first: { type: 'validation' | 'out-of-memory' | 'internal'; message: string } | null;
}

/** One lane: a reservation of ephemeral memory shared by its jobs, one iteration at a time. */
export interface LaneInfo {
  id: string;
  /** Reserved bytes (counted against capacity whether pooled or not). */
  sizeBytes: number;
  /** Bytes of real GPU buffers the lane's pool holds now, lent or idle. */
  pooledBytes: number;
  /** Ids of the jobs admitted to this lane. */
  jobs: string[];
  /** Id of the job whose iteration runs in the lane now, or null. */
  running: string | null;
}

/**
 * `salus memory --json`. Invariant: usedBytes = Σ jobs.persistentBytes + Σ lanes.sizeBytes. A job's
 * `querySetBytes` (8 bytes a query) and `textureBytes` (each texture's footprint) are part of its persistentBytes.
 */
export interface MemoryMap {
  capacityBytes: number;
  usedBytes: number;
  freeBytes: number;
  /** Where capacityBytes came from, e.g. "--memory", "nvidia-smi", "default (software GPU)". */
  capacitySource: string;
  /** Σ reserved persistent (declared or actual, whichever is larger) + Σ lane sizes: what admission counts. */
  committedBytes?: number;
  jobs: Array<{ id: string; persistentBytes: number; reservedPersistentBytes?: number; querySetBytes?: number; textureBytes?: number; lane?: string | null } & Partial<JobMemoryUse>>;
  lanes: LaneInfo[];
  /**
   * Compiled pipelines of ended jobs kept for later ones (core/executor/pipelinePool.ts): how many are kept now, and
   * how many later jobs got instead of compiling. Their memory is the service's, not the GPU's: not in usedBytes.
   */
  keptPipelines?: { count: number; reused: number };
  /**
   * Each GPU of the service, in order, with its own capacity, jobs and lanes; the fields above are their sums
   * (jobs and lanes: all of them). Always set by the service, one entry on a single-GPU machine.
   */
  gpus?: GpuMemoryMap[];
}

/** One GPU's part of the memory map: its id (`gpu0`, …), its adapter's name, and its own ledger. */
export interface GpuMemoryMap extends Omit<MemoryMap, 'gpus'> {
  id: string;
  name: string;
}

/** A knob's value: numbers and booleans only, so every knob can be a slider or a switch. */
export type PolicyParamValue = number | boolean;

/** `salus policy --json`. */
export interface PolicyInfo {
  name: PolicyName;
  params: Record<string, PolicyParamValue>;
  /** What each knob does and its range, for help text and sliders. */
  knobs: PolicyKnob[];
}

/** The scheduling policies, by the names users type. */
export const POLICY_NAMES = ['FIFO', 'SRTF', 'PACK', 'FAIR', 'PRIORITY'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/** Description of one tunable parameter of a policy. */
export interface PolicyKnob {
  key: string;
  /** One line saying what the knob does. */
  description: string;
  kind: 'number' | 'boolean';
  min?: number;
  max?: number;
  step?: number;
  unit?: string;
}

/** What the service says about the GPU it owns. */
export interface GpuInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  backend: string;
  /** True when the adapter is a CPU implementation such as SwiftShader. */
  isSoftware: boolean;
  features: string[];
  /** The adapter's subgroup sizes, where it reports them. */
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
}

/** Everything the panel needs at once; events carry updates of its parts. */
export interface ServiceSnapshot {
  version: string;
  /** The machine the service runs on: Slurm's node name there, else the host name (core/platform/nodeName.ts). */
  node?: string;
  /** The first GPU (on a single-GPU machine, the GPU). */
  gpu: GpuInfo;
  /** Every GPU the service shares, in order, with its id. Always set by the service. */
  gpus?: Array<GpuInfo & { id: string }>;
  jobs: JobInfo[];
  memory: MemoryMap;
  policy: PolicyInfo;
  /** Share of the last metrics window during which some lane ran an iteration, 0..1. */
  busyShare: number;
  /** The same for each GPU, by id (`gpu0`: …). Always set by the service. */
  busyShareByGpu?: Record<string, number>;
  at: number;
}
