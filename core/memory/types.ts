/**
 * The memory manager's public contract: what the executor and the service see.
 * Implemented by createMemoryManager in memoryManager.ts.
 */
import type { MemoryMap } from '../protocol/state.js';
import type { BufferDescriptor } from './allocator.js';

/**
 * A buffer lent to a job. The manager owns the real buffer: the executor never calls
 * `buffer.destroy()` itself but `free(lease)`, and it must refuse a job's commands
 * that use a lease after freeing it (the real buffer may be lent to someone else).
 */
export interface BufferLease {
  /** Unique within the manager. */
  readonly id: number;
  readonly jobId: string;
  /**
   * The real buffer (may be larger than sizeBytes when pooled). Paging replaces it: after `pageIn` it is a new
   * GPUBuffer with the same contents, and whatever the executor built on the old one (bind groups) must be rebuilt.
   */
  buffer: GPUBuffer;
  /** Where its contents are: on the GPU, or in host memory after `pageOut` (then `buffer` is destroyed). */
  residency: 'resident' | 'paging-out' | 'paged-out';
  /** What the job asked for: bind, clear, copy and map with this size. */
  readonly sizeBytes: number;
  readonly realSizeBytes: number;
  readonly usage: number;
  readonly pooled: boolean;
  kind: 'persistent' | 'ephemeral';
  /** Set while ephemeral. */
  laneId: string | null;
}

/** Why an allocation failed: `message` becomes a GPUOutOfMemoryError (or, for `validation`, a GPUValidationError) for that job alone. */
export type AllocRefusal = { ok: false; message: string; errorType: 'out-of-memory' | 'validation' };

/** An allocation's outcome. */
export type AllocResult = { ok: true; lease: BufferLease } | AllocRefusal;

/** The GPU objects besides buffers that a job's memory holds, never pooled: query sets and textures. */
export type ResourceKind = 'querySet' | 'texture';

/** The object of each resource kind. */
export interface ResourceOf {
  querySet: GPUQuerySet;
  texture: GPUTexture;
}

/**
 * A query set or texture held for a job, counted in the ledger as `sizeBytes` of the job's persistent memory
 * (a query set's 8 bytes a query; a texture's footprint, core/protocol/textureFormats.ts).
 */
export interface ResourceLease<K extends ResourceKind = ResourceKind> {
  /** Unique within the manager (shared with buffer leases' ids). */
  readonly id: number;
  readonly jobId: string;
  readonly kind: K;
  readonly resource: ResourceOf[K];
  readonly sizeBytes: number;
}

/** A resource allocation's outcome. */
export type ResourceResult<K extends ResourceKind = ResourceKind> = { ok: true; lease: ResourceLease<K> } | AllocRefusal;

/** A page-out's or page-in's outcome; `message` says why it did not happen. */
export type PageResult = { ok: true } | { ok: false; message: string };

/** A job's declared needs (Salus's hints); both absent means "measure me". */
export interface JobMemoryRequest {
  jobId: string;
  persistentBytes?: number;
  ephemeralBytes?: number;
}

/** Admission's answer. `wait` may turn into `admitted` after a departure; `refused` never will. */
export type AdmissionResult =
  | { kind: 'admitted'; laneId: string }
  | { kind: 'wait'; reason: string }
  | { kind: 'refused'; reason: string };

/** Policy inputs to admission. */
export interface AdmissionOptions {
  /** Lanes that may exist at once (values below 1 count as 1). */
  maxLanes: number;
}

/** MemoryMap plus what admission reserves, for the panel and tests. */
export interface MemorySnapshot extends MemoryMap {
  /** Σ reservedPersistent(job) + Σ lane sizes: what admission compares with capacity. */
  committedBytes: number;
  /** `querySetBytes`, `textureBytes`: of persistentBytes, the bytes of the job's query sets and of its textures. */
  jobs: Array<{ id: string; persistentBytes: number; reservedPersistentBytes: number; querySetBytes: number; textureBytes: number; lane: string }>;
}

/** What the executor calls; see createMemoryManager. */
export interface MemoryManager {
  readonly capacityBytes: number;
  readonly capacitySource: string;
  /** Tries to place the job now; never queues by itself (the caller keeps the waiting list and retries after departures, in arrival order). Admitting an admitted job answers its lane. */
  admit(request: JobMemoryRequest, options: AdmissionOptions): AdmissionResult;
  /** The job is gone: destroy every buffer and query set it holds, at once; leave its lane; free empty lanes. Idempotent. */
  release(jobId: string): void;
  /**
   * Inside an iteration (begin..end) a buffer is ephemeral: served from the job's lane pool (poolable ones) or
   * created fresh but counted in the lane; the lane evicts idle buffers, then grows if unreserved capacity allows
   * (shrinking other lanes toward their need if that is what it takes), else { ok:false }. Outside, it is
   * persistent: allowed while within the job's declared share, or past it when unreserved capacity is free; else
   * { ok:false } with a message saying the job's share, what it asked for and what is free. Never throws.
   *
   * A reused pooled buffer is zeroed, as WebGPU promises of a new buffer, unless `options.ownBytes` is set and
   * the same job held that buffer last: then it keeps the job's own old bytes (a discarded buffer coming back,
   * whose framework expects whatever its pool held; core/executor/discard.ts). Never another job's bytes.
   */
  allocate(jobId: string, descriptor: BufferDescriptor, options?: { ownBytes?: boolean }): AllocResult;
  /**
   * A query set or texture of `sizeBytes` for the job, made by `create` only once there is room. It counts as
   * persistent memory inside an iteration too (neither can live in a lane's pool): allowed within the job's
   * share or when unreserved capacity is free, as a persistent buffer is; else { ok:false } out-of-memory. A
   * `create` that throws is { ok:false } validation. Never throws.
   */
  allocateResource<K extends ResourceKind>(jobId: string, kind: K, sizeBytes: number, create: () => ResourceOf[K]): ResourceResult<K>;
  /** The job destroyed the query set or texture: destroyed and uncounted now. Idempotent. */
  freeResource(lease: ResourceLease): void;
  /**
   * The job destroyed the buffer. Persistent: destroyed now, unless a lane's pool made it, the job is between
   * iterations and its lane has room: then it waits idle in the lane for the pool's next loan. Ephemeral: a pooled buffer returns to the pool at the
   * iteration's end (never reused before it), an unpooled one is destroyed now. `discard` destroys a pooled buffer
   * too (use it when the buffer's creation raised an error). Idempotent.
   */
  free(lease: BufferLease, options?: { discard?: boolean }): void;
  /**
   * The job's framework put the buffer back in its own pool (core/executor/discard.ts): as `free`, except that a
   * persistent buffer a lane's pool made, discarded inside the job's iteration, joins the job's lane as a freed
   * ephemeral buffer instead of being destroyed, when the lane can grow by its size within unreserved capacity:
   * `takeBack` then returns it within the iteration, and from the iteration's end the pool lends it again (zeroed
   * for any other job) or evicts it when the room is needed. Idempotent.
   */
  freeDiscarded(lease: BufferLease): void;
  /**
   * Takes back a pooled buffer the job freed in its running iteration and that has not gone back to the pool yet
   * (nothing else can have had it): the same lease and real buffer, its bytes as the job left them. For a discarded
   * buffer used again in the iteration that discarded it (core/executor/discard.ts). False, changing nothing, when
   * the lease is gone or was not freed.
   */
  takeBack(lease: BufferLease): boolean;
  /** Whether `takeBack(lease)` would succeed now. */
  canTakeBack(lease: BufferLease): boolean;
  /** The job's iteration starts; its allocations are ephemeral until endIteration. Ignored when already inside one. */
  beginIteration(jobId: string): void;
  /** Returns freed ephemeral buffers to the pool; buffers created in the iteration and still alive become persistent (they leave the pool and the lane); records the iteration's ephemeral peak. */
  endIteration(jobId: string): void;
  /** Persistent bytes held now; the largest ephemeral peak of a finished iteration (the declared one before any finished). Zeros for an unknown job. */
  usage(jobId: string): { persistentBytes: number; ephemeralPeakBytes: number };
  /**
   * Where the job's bytes are: `residentBytes` of real GPU buffers it holds now (persistent, plus what its running
   * iteration holds in its lane), `pagedOutBytes` of its buffers' contents kept in host memory instead. Zeros for an
   * unknown job.
   */
  residency(jobId: string): { residentBytes: number; pagedOutBytes: number; stateBytes: number };
  /**
   * Bytes of `bytes` more that the job could not get now, 0 when they fit: `ephemeral` ones in its lane (or
   * by growing it), `persistent` ones in its declared share or unreserved capacity; other lanes' slack counts.
   */
  shortfallBytes(jobId: string, bytes: number, kind: 'persistent' | 'ephemeral'): number;
  /**
   * Gives the job's freed ephemeral buffers back to its lane's pool before its iteration's memory side ends
   * (the lane passed to another job, so its GPU work with them is done); what it still holds stays its own.
   */
  returnFreed(jobId: string): void;
  /**
   * Holds `bytes` of room for the job's next allocations (a batch Residency made room for), so no other job
   * takes it before they happen; each allocation of the job uses some up, 0 lets go of the rest.
   */
  holdRoom(jobId: string, bytes: number): void;
  /**
   * Moves a resident persistent buffer's contents to host memory and destroys its GPU buffer, through a staging
   * buffer of at most 1 MiB counted as the job's (so it needs that much room). The caller guarantees the job does
   * not use the lease until it is paged in. Resolves { ok:false } when it cannot page (pooled in a lane, mapped,
   * not copyable, no room for staging) or when the job freed the lease or was released meanwhile (then nothing is
   * left behind).
   */
  pageOut(lease: BufferLease): Promise<PageResult>;
  /**
   * Brings a paged-out lease back: a new GPU buffer with the same size and usage, its contents written on the queue
   * before anything submitted later. { ok:false } with an out-of-memory message when the job's share and the free
   * capacity have no room for it (it stays paged out).
   */
  pageIn(lease: BufferLease): PageResult;
  /** The job's lane, or null when it is not admitted. */
  laneOf(jobId: string): string | null;
  /**
   * The MemoryMap of core/protocol/state.ts; lanes[].running is the job now between beginIteration and
   * endIteration in that lane. Invariant: usedBytes = Σ jobs.persistentBytes + Σ lanes.sizeBytes; freeBytes =
   * capacity − used. freeBytes goes negative only when buffers that survived an iteration (now persistent) pushed
   * the total past capacity and no lane had slack to give back; admission then waits until jobs leave.
   */
  snapshot(): MemorySnapshot;
  /** Real buffers and query sets alive and their bytes (the ledger's totals); both 0 when no job is admitted. */
  liveBuffers(): { count: number; bytes: number };
  /** Increments on every change the snapshot would show, so the service pushes memory events only then. */
  readonly version: number;
}
