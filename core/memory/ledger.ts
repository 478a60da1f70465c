/**
 * Exact byte accounting: every real GPU buffer the memory manager holds, who holds
 * it and how, plus the reservations admission counts (lane sizes, declared
 * persistent shares). The single source of truth for the MemoryMap.
 */

/** How a real buffer is held: by a job across iterations, by a job inside an iteration in a lane, or idle in a lane's pool. */
export type BufferState = 'persistent' | 'ephemeral' | 'idle';

/** One real buffer. `jobId` is null only when idle; `laneId` is null only when persistent. */
export interface LedgerEntry {
  readonly bufferId: number;
  /** Real size of the GPU buffer (a pooled one is rounded up to its size class). */
  readonly sizeBytes: number;
  /** Whether the buffer belongs to a lane's pool (it returns there instead of being destroyed). */
  readonly pooled: boolean;
  state: BufferState;
  jobId: string | null;
  laneId: string | null;
}

function add(map: Map<string, number>, key: string | null, delta: number): void {
  if (key === null || delta === 0) return;
  const next = (map.get(key) ?? 0) + delta;
  if (next === 0) map.delete(key);
  else map.set(key, next);
}

/**
 * The ledger. Queries are O(1) except committedBytes (O(jobs)). `revision` grows
 * whenever something the MemoryMap shows changes: a job's persistent bytes, a
 * lane's pooled bytes or size, the set of jobs or lanes.
 */
export class Ledger {
  private readonly entries = new Map<number, LedgerEntry>();
  private readonly persistentByJob = new Map<string, number>();
  private readonly ephemeralByJob = new Map<string, number>();
  private readonly ephemeralByLane = new Map<string, number>();
  private readonly idleByLane = new Map<string, number>();
  private readonly pooledByLane = new Map<string, number>();
  private readonly laneSizes = new Map<string, number>();
  private readonly declaredShares = new Map<string, number>();
  /** Bytes of each job's buffers whose contents were paged out to host memory (no GPU buffer holds them). */
  private readonly pagedByJob = new Map<string, number>();
  private totalBufferBytes = 0;
  private totalPersistentBytes = 0;
  private totalLaneSizeBytes = 0;
  private revisionCount = 0;

  /** Grows on every change the MemoryMap would show. */
  get revision(): number {
    return this.revisionCount;
  }

  private apply(entry: LedgerEntry, sign: 1 | -1): void {
    const bytes = sign * entry.sizeBytes;
    if (entry.state === 'persistent') {
      add(this.persistentByJob, entry.jobId, bytes);
      this.totalPersistentBytes += bytes;
    } else if (entry.state === 'ephemeral') {
      add(this.ephemeralByJob, entry.jobId, bytes);
      add(this.ephemeralByLane, entry.laneId, bytes);
    } else {
      add(this.idleByLane, entry.laneId, bytes);
    }
    if (entry.pooled && entry.state !== 'persistent') add(this.pooledByLane, entry.laneId, bytes);
    this.totalBufferBytes += bytes;
    if (bytes !== 0 && (entry.state === 'persistent' || entry.pooled)) this.revisionCount += 1;
  }

  /** Adds a newly created buffer. Throws on a duplicate id (a bug in the caller, not a job's error). */
  record(entry: LedgerEntry): void {
    if (this.entries.has(entry.bufferId)) throw new Error(`ledger: buffer ${entry.bufferId} is already recorded`);
    const copy = { ...entry };
    this.entries.set(copy.bufferId, copy);
    this.apply(copy, 1);
  }

  /** Changes how a recorded buffer is held. Throws when it is unknown. */
  move(bufferId: number, to: { state: BufferState; jobId: string | null; laneId: string | null }): void {
    const entry = this.entries.get(bufferId);
    if (!entry) throw new Error(`ledger: buffer ${bufferId} is not recorded`);
    this.apply(entry, -1);
    entry.state = to.state;
    entry.jobId = to.jobId;
    entry.laneId = to.laneId;
    this.apply(entry, 1);
  }

  /** Forgets a destroyed buffer; returns its last entry, or undefined when it was not recorded. */
  remove(bufferId: number): LedgerEntry | undefined {
    const entry = this.entries.get(bufferId);
    if (!entry) return undefined;
    this.apply(entry, -1);
    this.entries.delete(bufferId);
    return entry;
  }

  /** A copy of the buffer's entry, or undefined. */
  get(bufferId: number): LedgerEntry | undefined {
    const entry = this.entries.get(bufferId);
    return entry && { ...entry };
  }

  /** Counts bytes of the job's contents held in host memory instead of a GPU buffer (negative: they came back or were dropped). */
  addPaged(jobId: string, deltaBytes: number): void {
    add(this.pagedByJob, jobId, deltaBytes);
    if (deltaBytes !== 0) this.revisionCount += 1;
  }

  /** Bytes of the job's buffers paged out to host memory. */
  pagedBytes(jobId: string): number {
    return this.pagedByJob.get(jobId) ?? 0;
  }

  /** Bytes of persistent buffers the job holds. */
  persistentBytes(jobId: string): number {
    return this.persistentByJob.get(jobId) ?? 0;
  }

  /** Bytes the job holds in its lane inside the running iteration (lent pool buffers, freed or not, and unpooled ephemeral ones). */
  ephemeralBytes(jobId: string): number {
    return this.ephemeralByJob.get(jobId) ?? 0;
  }

  /** Bytes of the lane held by jobs inside iterations (these cannot be evicted). */
  laneEphemeralBytes(laneId: string): number {
    return this.ephemeralByLane.get(laneId) ?? 0;
  }

  /** Bytes of idle buffers in the lane's pool (these can be evicted). */
  laneIdleBytes(laneId: string): number {
    return this.idleByLane.get(laneId) ?? 0;
  }

  /** Bytes of real buffers the lane's pool holds, lent or idle (LaneInfo.pooledBytes). */
  lanePooledBytes(laneId: string): number {
    return this.pooledByLane.get(laneId) ?? 0;
  }

  /** Bytes of real buffers counted against the lane's size: ephemeral plus idle. Never above its size. */
  laneOccupiedBytes(laneId: string): number {
    return this.laneEphemeralBytes(laneId) + this.laneIdleBytes(laneId);
  }

  /** Sets (or creates) a lane's reservation. */
  setLaneSize(laneId: string, sizeBytes: number): void {
    const previous = this.laneSizes.get(laneId);
    if (previous === sizeBytes) return;
    this.totalLaneSizeBytes += sizeBytes - (previous ?? 0);
    this.laneSizes.set(laneId, sizeBytes);
    this.revisionCount += 1;
  }

  /** Drops a lane's reservation (its buffers must already be gone). */
  removeLane(laneId: string): void {
    const previous = this.laneSizes.get(laneId);
    if (previous === undefined) return;
    this.totalLaneSizeBytes -= previous;
    this.laneSizes.delete(laneId);
    this.revisionCount += 1;
  }

  /** A lane's reserved size, 0 for an unknown lane. */
  laneSizeBytes(laneId: string): number {
    return this.laneSizes.get(laneId) ?? 0;
  }

  /** Registers an admitted job with its padded declared persistent share (1.1 × declared). */
  addJob(jobId: string, declaredShareBytes: number): void {
    this.declaredShares.set(jobId, declaredShareBytes);
    this.revisionCount += 1;
  }

  /** Unregisters a job (its buffers must already be gone). */
  removeJob(jobId: string): void {
    if (this.declaredShares.delete(jobId)) this.revisionCount += 1;
  }

  /** The job's padded declared persistent share. */
  declaredShareBytes(jobId: string): number {
    return this.declaredShares.get(jobId) ?? 0;
  }

  /** What admission counts for the job: max(padded declared share, actual persistent bytes). */
  reservedPersistentBytes(jobId: string): number {
    return Math.max(this.declaredShareBytes(jobId), this.persistentBytes(jobId));
  }

  /** Σ reservedPersistentBytes(job) + Σ lane sizes: what admission compares with capacity. */
  committedBytes(): number {
    let bytes = this.totalLaneSizeBytes;
    for (const jobId of this.declaredShares.keys()) bytes += this.reservedPersistentBytes(jobId);
    return bytes;
  }

  /** Σ actual persistent bytes + Σ lane sizes (MemoryMap.usedBytes). */
  usedBytes(): number {
    return this.totalPersistentBytes + this.totalLaneSizeBytes;
  }

  /** Real buffers alive and their bytes; both 0 once every job and lane is gone. */
  liveBuffers(): { count: number; bytes: number } {
    return { count: this.entries.size, bytes: this.totalBufferBytes };
  }
}
