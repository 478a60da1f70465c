/**
 * A lane's pool of whole GPUBuffers (DESIGN.md decision 2: no arena with offsets).
 * Idle buffers wait in buckets keyed by (usage, size class) and are lent again,
 * zeroed, to the next iteration that asks for that bucket.
 */
import type { BufferAllocator } from './allocator.js';
import type { Ledger } from './ledger.js';

/** A real GPU buffer as the memory manager tracks it. */
export interface RealBuffer {
  /** Unique among the manager's buffers; the ledger's key. */
  readonly id: number;
  readonly buffer: GPUBuffer;
  /** The buffer's real size (a size class for pooled buffers). */
  readonly sizeBytes: number;
  readonly usage: number;
  /** Whether it was made by a lane's pool. */
  readonly pooled: boolean;
}

const SMALL_LIMIT_BYTES = 4096;
const SMALL_GRANULE_BYTES = 256;
const STEPS_PER_DOUBLING = 8;

/**
 * Rounds a size up to its pool size class: multiples of 256 bytes up to 4 KiB, then
 * 8 steps per power of two, so a class wastes less than 12.5% of any size above 4 KiB
 * (below, at most 255 bytes). Returns 0 for 0.
 */
export function sizeClassBytes(sizeBytes: number): number {
  if (sizeBytes <= 0) return 0;
  if (sizeBytes <= SMALL_LIMIT_BYTES) return Math.ceil(sizeBytes / SMALL_GRANULE_BYTES) * SMALL_GRANULE_BYTES;
  let power = SMALL_LIMIT_BYTES;
  while (power * 2 < sizeBytes) power *= 2; // now power < sizeBytes <= 2 * power
  const step = power / STEPS_PER_DOUBLING;
  return Math.ceil(sizeBytes / step) * step;
}

/** Where a pool lives and what it creates buffers with. */
export interface BufferPoolOptions {
  laneId: string;
  allocator: BufferAllocator;
  ledger: Ledger;
  /** Hands out manager-wide buffer ids. */
  nextBufferId: () => number;
}

/**
 * A bucket's key as one number, so a lookup makes no string. Pooled buffers' usage holds only WebGPU's ten
 * flags (allocator.ts's isPoolable), below 2^10, and size classes stay far below 2^43: the key is unique and exact.
 */
const USAGE_KEYS = 1024;
const bucketKey = (usage: number, classBytes: number): number => classBytes * USAGE_KEYS + usage;

/**
 * One lane's pool. Every buffer it holds is in the ledger, as `ephemeral` while lent
 * to a job or `idle` while waiting; the pool performs those ledger moves itself. The
 * caller decides whether there is room (the pool does not know the lane's size).
 */
export class BufferPool {
  readonly laneId: string;
  private readonly allocator: BufferAllocator;
  private readonly ledger: Ledger;
  private readonly nextBufferId: () => number;
  private readonly buckets = new Map<number, RealBuffer[]>();
  /** Idle buffers, oldest first (Map keeps insertion order), for eviction. */
  private readonly idle = new Map<number, RealBuffer>();
  private readonly lent = new Map<number, RealBuffer>();
  /**
   * Each buffer's last borrower and its label as last set. Setting a label is a call into
   * the driver (tens of µs on Dawn/SwiftShader), so a reused buffer is relabelled only
   * when its new borrower's label differs; idle buffers keep their last borrower's label.
   */
  private readonly holders = new Map<number, { jobId: string; label: string }>();

  constructor(options: BufferPoolOptions) {
    this.laneId = options.laneId;
    this.allocator = options.allocator;
    this.ledger = options.ledger;
    this.nextBufferId = options.nextBufferId;
  }

  /** The real size a pooled buffer for sizeBytes would have, or null when rounding up would pass maxBufferSize. */
  classSizeFor(sizeBytes: number): number | null {
    const classBytes = sizeClassBytes(sizeBytes);
    const max = this.allocator.maxBufferSizeBytes;
    return max !== undefined && classBytes > max ? null : classBytes;
  }

  /** Idle buffers and lent buffers, by count. */
  get counts(): { idle: number; lent: number } {
    return { idle: this.idle.size, lent: this.lent.size };
  }

  /**
   * Lends an idle buffer of this usage and size class to jobId, zeroed first across
   * the whole real buffer, not only the sizeBytes asked for: WebGPU promises zeroed
   * new buffers, the last holder may have been another job, and no byte of it may
   * reach this one (the executor bounds every access by sizeBytes as well). With
   * `ownBytes`, a buffer jobId itself held last is lent as it is (its own bytes).
   * Returns null when the bucket is empty.
   */
  reuse(jobId: string, usage: number, sizeBytes: number, label: string, ownBytes = false): RealBuffer | null {
    const classBytes = this.classSizeFor(sizeBytes);
    if (classBytes === null) return null;
    const bucket = this.buckets.get(bucketKey(usage, classBytes));
    const real = bucket?.pop(); // Most recently returned first: likeliest still warm.
    if (!real) return null;
    this.idle.delete(real.id);
    this.lent.set(real.id, real);
    const holder = this.holders.get(real.id);
    if (!ownBytes || holder?.jobId !== jobId) this.allocator.clearBuffer(real.buffer, real.sizeBytes);
    if (holder?.label !== label) setLabel(real.buffer, label);
    if (holder) {
      holder.jobId = jobId;
      holder.label = label;
    } else this.holders.set(real.id, { jobId, label });
    this.ledger.move(real.id, { state: 'ephemeral', jobId, laneId: this.laneId });
    return real;
  }

  /** Creates a new buffer of sizeBytes's class and lends it to jobId. The caller made room for classSizeFor(sizeBytes). */
  create(jobId: string, usage: number, sizeBytes: number, label: string): RealBuffer {
    const classBytes = this.classSizeFor(sizeBytes) ?? sizeBytes;
    const buffer = this.allocator.createBuffer({ size: classBytes, usage, label });
    const real: RealBuffer = { id: this.nextBufferId(), buffer, sizeBytes: classBytes, usage, pooled: true };
    this.lent.set(real.id, real);
    this.holders.set(real.id, { jobId, label });
    this.ledger.record({ bufferId: real.id, sizeBytes: classBytes, pooled: true, state: 'ephemeral', jobId, laneId: this.laneId });
    return real;
  }

  /** A lent buffer comes back and waits, idle, for its next borrower. */
  giveBack(real: RealBuffer): void {
    if (!this.lent.delete(real.id)) return;
    const key = bucketKey(real.usage, real.sizeBytes);
    const bucket = this.buckets.get(key) ?? [];
    bucket.push(real);
    this.buckets.set(key, bucket);
    this.idle.set(real.id, real);
    this.ledger.move(real.id, { state: 'idle', jobId: null, laneId: this.laneId });
  }

  /**
   * Takes back, as lent to jobId, a buffer this pool made and later detached (it became jobId's persistent
   * memory). Its bytes and label stay as jobId left them; the caller made room for it in the lane.
   */
  adopt(real: RealBuffer, jobId: string): void {
    this.lent.set(real.id, real);
    this.holders.set(real.id, { jobId, label: real.buffer.label });
    this.ledger.move(real.id, { state: 'ephemeral', jobId, laneId: this.laneId });
  }

  /** A lent buffer leaves the pool without being destroyed (it survived its iteration). The caller re-files it in the ledger. */
  detach(real: RealBuffer): void {
    this.lent.delete(real.id);
    this.holders.delete(real.id);
  }

  /** Destroys a lent or idle buffer of this pool. */
  destroy(real: RealBuffer): void {
    if (this.idle.delete(real.id)) {
      const bucket = this.buckets.get(bucketKey(real.usage, real.sizeBytes));
      bucket?.splice(bucket.indexOf(real), 1);
      if (bucket?.length === 0) this.buckets.delete(bucketKey(real.usage, real.sizeBytes));
    } else if (!this.lent.delete(real.id)) {
      return;
    }
    real.buffer.destroy();
    this.holders.delete(real.id);
    this.ledger.remove(real.id);
  }

  /** Destroys idle buffers, oldest first, until at least bytesNeeded are freed or none is left. Returns the bytes freed. */
  evictIdle(bytesNeeded: number): number {
    let freedBytes = 0;
    for (const real of [...this.idle.values()]) {
      if (freedBytes >= bytesNeeded) break;
      this.destroy(real);
      freedBytes += real.sizeBytes;
    }
    return freedBytes;
  }

  /** Destroys every buffer, idle or lent (the lane is going away). */
  destroyAll(): void {
    for (const real of [...this.idle.values(), ...this.lent.values()]) this.destroy(real);
  }
}

/** Labels say who holds a buffer now; Dawn lets labels change. */
export function setLabel(buffer: GPUBuffer, label: string): void {
  try {
    buffer.label = label;
  } catch {
    // A read-only label (some test doubles) only costs the debugging aid.
  }
}
