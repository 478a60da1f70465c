/**
 * The service's scratch rings: one shared-memory region per job, made before
 * the job asks for it. Each is a sealed memfd (core/platform/sharedMemory.ts)
 * whose pages are allocated and mapped in the background, on libuv's thread
 * pool; the service keeps one such spare ready and hands it to the next job
 * that connects, as the link `<jobId>-s` in the bulk folder pointing at
 * `/proc/<service pid>/fd/<n>`. The job opens the link and writes payloads in
 * place (core/client/bulkScratch.ts); the service passes views of its own
 * mapping straight to writeBuffer (core/executor/bulkRead.ts): no read copy,
 * and no fresh pages to fault in at a job's first upload.
 *
 * Safety: the memfd can neither shrink nor grow (seals), so no job can make the
 * service's mapping fault; each job's bytes are read only from the region the
 * service made for it, never through the link (which the job could replace); a
 * region is unmapped when its job ends and never handed to another job.
 *
 * Memory: at most `poolBytes` of regions exist at once, the spare included;
 * jobs that connect while none is free write a file of their own as before.
 */
import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SCRATCH_MAX_BYTES, scratchFileName } from './bulkDir.js';
import type { SharedMemoryAddon, SharedRegion } from './sharedMemory.js';

/** Shared memory the scratch rings may hold at once, the spare included (see SALUS_SCRATCH_POOL_MIB). */
export const SCRATCH_POOL_BYTES = 1024 * 1024 * 1024;

interface Ring {
  fd: number;
  region: SharedRegion;
  bytes: Uint8Array;
}

export interface ScratchPoolOptions {
  /** Each ring's size (default SCRATCH_MAX_BYTES, the most a job's scratch holds). */
  ringBytes?: number;
  /** The most all rings may hold at once, the spare included (default SCRATCH_POOL_BYTES). */
  poolBytes?: number;
  log?: (message: string) => void;
}

const pools = new Map<string, ScratchPool>();

/** The pool serving bulk folder `dir`, if one was started there. */
export function scratchPoolFor(dir: string | null): ScratchPool | undefined {
  return dir ? pools.get(dir) : undefined;
}

export class ScratchPool {
  private readonly ringBytes: number;
  private readonly maxRings: number;
  private readonly log: (message: string) => void;
  private readonly live = new Map<string, Ring>();
  /** Jobs that connected while no spare was ready: the next one goes to the first still waiting. */
  private readonly waiting = new Set<string>();
  private spare: Ring | null = null;
  private making = false;
  /** The last ring could not be made: no more tries until a job ends and frees memory. */
  private failed = false;
  private closed = false;

  /** Starts making the first spare; `scratchPoolFor(dir)` finds the pool from now on. */
  constructor(private readonly dir: string, private readonly addon: SharedMemoryAddon, options: ScratchPoolOptions = {}) {
    this.ringBytes = options.ringBytes ?? SCRATCH_MAX_BYTES;
    this.maxRings = Math.max(0, Math.floor((options.poolBytes ?? SCRATCH_POOL_BYTES) / this.ringBytes));
    this.log = options.log ?? (() => {});
    pools.set(dir, this);
    this.refill();
  }

  /** Rings in use by jobs, and whether a spare is ready. */
  get stats(): { live: number; spareReady: boolean; maxRings: number } {
    return { live: this.live.size, spareReady: this.spare !== null, maxRings: this.maxRings };
  }

  /**
   * A job connected: it gets the spare now (its link exists when this returns),
   * or the next one made if there is room for it. Never blocks.
   */
  assign(jobId: string): void {
    if (this.closed || this.live.has(jobId)) return;
    if (this.spare && this.link(jobId, this.spare)) {
      this.spare = null;
    } else {
      this.waiting.add(jobId);
    }
    this.refill();
  }

  /** The job's region, as bytes: only what the service made for this job. */
  regionOf(jobId: string): Uint8Array | undefined {
    return this.live.get(jobId)?.bytes;
  }

  /**
   * The job ended: its region is unmapped (views of it become empty), its link
   * removed, and its memory freed once the job's process lets go of it too.
   */
  release(jobId: string): void {
    this.waiting.delete(jobId);
    const ring = this.live.get(jobId);
    if (!ring) return;
    this.live.delete(jobId);
    this.drop(ring);
    // Its link, if the job left it (a job with no session never has its files cleaned up otherwise).
    rmSync(join(this.dir, scratchFileName(jobId)), { force: true });
    this.failed = false;
    this.refill();
  }

  /** Unmaps every ring; the pool makes no more. */
  close(): void {
    this.closed = true;
    pools.delete(this.dir);
    for (const ring of this.live.values()) this.drop(ring);
    this.live.clear();
    this.waiting.clear();
    if (this.spare) this.drop(this.spare);
    this.spare = null;
  }

  private link(jobId: string, ring: Ring): boolean {
    try {
      symlinkSync(`/proc/${process.pid}/fd/${ring.fd}`, join(this.dir, scratchFileName(jobId)));
    } catch {
      // The name is taken (the job made its own file first): it keeps that.
      return false;
    }
    this.live.set(jobId, ring);
    return true;
  }

  /** Never on the service's thread: the ring's pages may be freed by its last close. */
  private drop(ring: Ring): void {
    this.addon.unmap(ring.region, ring.fd);
  }

  /** Makes the next spare in the background, when none is ready or being made and there is room. */
  private refill(): void {
    if (this.closed || this.making || this.failed || this.spare || this.live.size + 1 > this.maxRings) return;
    this.making = true;
    this.addon.createSealed(this.ringBytes).then(({ fd, region }) => {
      this.making = false;
      const ring = { fd, region, bytes: new Uint8Array(region.buffer) };
      if (this.closed) return this.drop(ring);
      this.spare = ring;
      for (const jobId of this.waiting) {
        this.waiting.delete(jobId);
        if (this.link(jobId, ring)) {
          this.spare = null;
          break;
        }
      }
      this.refill();
    }, (error: Error) => {
      this.making = false;
      this.failed = true;
      // Out of shared memory, most likely: jobs write files of their own until a job ends and frees some.
      this.log(`salus: cannot make a ${this.ringBytes >> 20} MiB scratch ring (${error.message}); jobs use plain bulk files until one is freed`);
    });
  }
}
