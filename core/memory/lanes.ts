/**
 * Lanes: reservations of ephemeral memory, each with its pool of buffers. A lane's
 * size is what admission counts; the real buffers it holds (lent or idle) never
 * exceed it. At most one iteration runs in a lane at a time (the scheduler's rule).
 */
import type { BufferAllocator } from './allocator.js';
import { BufferPool } from './bufferPool.js';
import type { Ledger } from './ledger.js';

/** One lane. Its size lives in the ledger (`ledger.laneSizeBytes(id)`). */
export interface Lane {
  /** "lane-1", "lane-2", … (after the manager's `laneIdPrefix`, e.g. "gpu1/lane-1"); never reused within a manager. */
  readonly id: string;
  readonly pool: BufferPool;
  /** Admitted jobs, in joining order. */
  readonly jobs: Set<string>;
  /** Jobs between beginIteration and endIteration, in start order (the scheduler keeps this to one). */
  readonly running: Set<string>;
}

/** What the lanes share with the manager. */
export interface LaneTableOptions {
  allocator: BufferAllocator;
  ledger: Ledger;
  nextBufferId: () => number;
  /** Put before every lane id, so lanes of several GPUs' managers never share one ('' by default). */
  laneIdPrefix?: string;
}

/** The manager's lanes, in creation order. */
export class LaneTable {
  private readonly lanes = new Map<string, Lane>();
  private readonly options: LaneTableOptions;
  private laneCount = 0;

  constructor(options: LaneTableOptions) {
    this.options = options;
  }

  /** Creates an empty lane of sizeBytes and reserves it in the ledger. */
  create(sizeBytes: number): Lane {
    this.laneCount += 1;
    const id = `${this.options.laneIdPrefix ?? ''}lane-${this.laneCount}`;
    const pool = new BufferPool({ laneId: id, ...this.options });
    const lane: Lane = { id, pool, jobs: new Set(), running: new Set() };
    this.lanes.set(id, lane);
    this.options.ledger.setLaneSize(id, sizeBytes);
    return lane;
  }

  /** The lane, or undefined. */
  get(laneId: string): Lane | undefined {
    return this.lanes.get(laneId);
  }

  /** Every lane, oldest first. */
  list(): Lane[] {
    return [...this.lanes.values()];
  }

  /** How many lanes exist. */
  get count(): number {
    return this.lanes.size;
  }

  /** The lane's reserved size. */
  sizeBytes(laneId: string): number {
    return this.options.ledger.laneSizeBytes(laneId);
  }

  /** Bytes lent to iterations in the lane: a floor for its size, since they cannot be evicted. */
  lentBytes(laneId: string): number {
    return this.options.ledger.laneEphemeralBytes(laneId);
  }

  /**
   * Sets the lane's size, evicting idle buffers (oldest first) so what it holds fits.
   * Returns false and changes nothing when the bytes lent out exceed sizeBytes.
   */
  resize(laneId: string, sizeBytes: number): boolean {
    const lane = this.lanes.get(laneId);
    if (!lane || sizeBytes < this.lentBytes(laneId)) return false;
    const excessBytes = this.options.ledger.laneOccupiedBytes(laneId) - sizeBytes;
    if (excessBytes > 0) lane.pool.evictIdle(excessBytes);
    this.options.ledger.setLaneSize(laneId, sizeBytes);
    return true;
  }

  /**
   * Evicts idle buffers until `bytes` more fit in the lane's current size. Returns how
   * many bytes still do not fit (0 when they do): what the lane would have to grow by.
   */
  makeRoom(laneId: string, bytes: number): number {
    const lane = this.lanes.get(laneId);
    if (!lane) return bytes;
    const ledger = this.options.ledger;
    const overBytes = ledger.laneOccupiedBytes(laneId) + bytes - ledger.laneSizeBytes(laneId);
    if (overBytes > 0) lane.pool.evictIdle(overBytes);
    return Math.max(0, ledger.laneOccupiedBytes(laneId) + bytes - ledger.laneSizeBytes(laneId));
  }

  /** Destroys the lane's pool and frees its reservation. Its jobs must have left. */
  delete(laneId: string): void {
    const lane = this.lanes.get(laneId);
    if (!lane) return;
    lane.pool.destroyAll();
    this.lanes.delete(laneId);
    this.options.ledger.removeLane(laneId);
  }
}
