/**
 * The service's scratch rings: one shared-memory region per job, made before
 * the job asks for it. Each is a sealed memfd (core/platform/sharedMemory.ts)
 * whose pages are allocated and mapped in the background, on libuv's thread
 * pool; the service keeps one such spare ready and hands it to the next job
 * that connects, as the link `<jobId>-s` in the bulk folder pointing at
 * `/proc/<service pid>/fd/<n>`. Handing it out is only that link: a job maps
 * its ring when it first needs it (core/client/bulkScratch.ts). Making a ring
 * costs 0.1–0.3 s of kernel time for 256 MiB, so the pool makes one only when
 * a job is waiting for it, or when no ring exists at all: a ring comes back to
 * the pool when its job's processes have exited (see `recycle`) and is the
 * next job's, so jobs that come one after another share one ring and never
 * pay for making it. The job opens the link and writes payloads in
 * place (core/client/bulkScratch.ts); the service passes views of its own
 * mapping straight to writeBuffer (core/executor/bulkRead.ts): no read copy,
 * and no fresh pages to fault in at a job's first upload.
 *
 * Safety: the memfd can neither shrink nor grow (seals), so no job can make the
 * service's mapping fault; each job's bytes are read only from the region the
 * service made for it, never through the link (which the job could replace); a
 * region is handed to another job only once every process the OS said held the
 * job's connection has exited (a process that exited maps nothing), else it is
 * unmapped when its job ends. A recycled ring is zeroed before it is handed
 * on: the next job (which maps all of it) never sees the last one's bytes, as
 * it never sees them in GPU memory either.
 *
 * Memory: at most `poolBytes` of regions exist at once, the spare included;
 * jobs that connect while none is free write a file of their own as before.
 */
import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SCRATCH_MAX_BYTES, scratchFileName } from './bulkDir.js';
import type { SharedMemoryAddon, SharedRegion } from './sharedMemory.js';

/** Shared memory the scratch rings may hold at once, the spare included (see SALUS_SCRATCH_POOL_MIB). */
export const SCRATCH_POOL_BYTES = 1024 * 1024 * 1024;

/** How long a ring waits, after its job ended, for the job's processes to exit and hand it on; then it is unmapped. */
export const RECYCLE_WAIT_MS = 3000;
const RECYCLE_POLL_MS = 50;

/** Whether process `pid` has exited (gone, or a zombie: its memory is unmapped already). Linux's /proc. */
export function processExited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

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
  /** How long an ended job's ring waits for the job's processes to exit (default RECYCLE_WAIT_MS). */
  recycleWaitMs?: number;
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
  private readonly recycleWaitMs: number;
  private readonly live = new Map<string, Ring>();
  /** The processes the OS said held each job's connection (setOwners). */
  private readonly owners = new Map<string, readonly number[]>();
  /** Rings of ended jobs waiting for their processes to exit. */
  private recycling = 0;
  /** Jobs that connected while no spare was ready: the next one goes to the first still waiting. */
  private readonly waiting = new Set<string>();
  private spare: Ring | null = null;
  private making = false;
  /** The last ring could not be made: no more tries until a job ends and frees memory. */
  private failed = false;
  private made = 0;
  private closed = false;

  /** Starts making the first spare; `scratchPoolFor(dir)` finds the pool from now on. */
  constructor(private readonly dir: string, private readonly addon: SharedMemoryAddon, options: ScratchPoolOptions = {}) {
    this.ringBytes = options.ringBytes ?? SCRATCH_MAX_BYTES;
    this.maxRings = Math.max(0, Math.floor((options.poolBytes ?? SCRATCH_POOL_BYTES) / this.ringBytes));
    this.log = options.log ?? (() => {});
    this.recycleWaitMs = options.recycleWaitMs ?? RECYCLE_WAIT_MS;
    pools.set(dir, this);
    this.refill();
  }

  /** Rings in use by jobs, whether a spare is ready, and rings made so far (recycled ones count once). */
  get stats(): { live: number; spareReady: boolean; maxRings: number; made: number } {
    return { live: this.live.size, spareReady: this.spare !== null, maxRings: this.maxRings, made: this.made };
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

  /**
   * The processes the OS says hold job `jobId`'s connection: once all of them
   * have exited after the job ended, its ring may serve another job. Without
   * them (the OS could not say) the ring is unmapped at the job's end.
   */
  setOwners(jobId: string, pids: readonly number[]): void {
    if (this.live.has(jobId) || this.waiting.has(jobId)) this.owners.set(jobId, pids);
  }

  /** The job's region, as bytes: only what the service made for this job. */
  regionOf(jobId: string): Uint8Array | undefined {
    return this.live.get(jobId)?.bytes;
  }

  /**
   * The job ended: its link is removed and the service stops reading its
   * region for it; the region serves the next job once the job's processes
   * have all exited (within `recycleWaitMs`), else it is unmapped (views of it
   * become empty) and its memory freed once the job's process lets go of it too.
   */
  release(jobId: string): void {
    this.waiting.delete(jobId);
    const owners = this.owners.get(jobId) ?? [];
    this.owners.delete(jobId);
    const ring = this.live.get(jobId);
    if (!ring) return;
    this.live.delete(jobId);
    // Its link, if the job left it (a job with no session never has its files cleaned up otherwise).
    rmSync(join(this.dir, scratchFileName(jobId)), { force: true });
    if (owners.length > 0) {
      this.recycling++;
      this.recycle(ring, owners, performance.now() + this.recycleWaitMs);
      return;
    }
    this.drop(ring);
    this.failed = false;
    this.refill();
  }

  /** Hands `ring` on as the spare (or to a job waiting) once every one of `pids` has exited; unmaps it past `deadlineMs`. */
  private recycle(ring: Ring, pids: readonly number[], deadlineMs: number): void {
    const gone = pids.every(processExited);
    if (!gone && !this.closed && performance.now() < deadlineMs) {
      setTimeout(() => this.recycle(ring, pids, deadlineMs), RECYCLE_POLL_MS).unref();
      return;
    }
    this.recycling--;
    if (!gone || this.closed || this.spare) {
      this.drop(ring);
    } else {
      // The last job's uploads and readbacks (its weights, its data) must not reach the next: zeroed first
      // (a memset of pages already resident, ~6 ms for 256 MiB, once per ended job that used a ring).
      ring.bytes.fill(0);
      this.offer(ring);
    }
    this.failed = false;
    this.refill();
  }

  /** A ring ready for a job: the first job still waiting gets it, else it is the spare. */
  private offer(ring: Ring): void {
    this.spare = ring;
    for (const jobId of this.waiting) {
      this.waiting.delete(jobId);
      if (this.link(jobId, ring)) {
        this.spare = null;
        break;
      }
    }
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

  /**
   * Makes a ring in the background when a job waits for one, or when none
   * exists (the first job's): never while none is needed (the rings in use come
   * back as their jobs end), nor past the pool's bound, nor two at once.
   */
  private refill(): void {
    if (this.closed || this.making || this.failed || this.spare || this.live.size + this.recycling + 1 > this.maxRings) return;
    if (this.waiting.size === 0 && this.live.size + this.recycling > 0) return;
    this.making = true;
    this.addon.createSealed(this.ringBytes).then(({ fd, region }) => {
      this.making = false;
      this.made++;
      const ring = { fd, region, bytes: new Uint8Array(region.buffer) };
      if (this.closed) return this.drop(ring);
      this.offer(ring);
      this.refill();
    }, (error: Error) => {
      this.making = false;
      this.failed = true;
      // Out of shared memory, most likely: jobs write files of their own until a job ends and frees some.
      this.log(`salus: cannot make a ${this.ringBytes >> 20} MiB scratch ring (${error.message}); jobs use plain bulk files until one is freed`);
    });
  }
}
