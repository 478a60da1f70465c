/**
 * Gives each job that connects a scratch ring of shared memory
 * (core/platform/scratchPool.ts) where the bulk channel and the shared-memory
 * addon both exist, and takes it back when the job ends (for the next job, once
 * the processes the OS said held the job's connection have exited). Where the
 * addon cannot be had, says so once and leaves jobs on plain bulk files.
 */
import { loadSharedMemory } from '../platform/sharedMemory.js';
import { ScratchPool, SCRATCH_POOL_BYTES } from '../platform/scratchPool.js';
import type { SalusService } from './service.js';

/**
 * Starts the rings for `service` (null, with a log line saying why, where it
 * cannot). `SALUS_SCRATCH_POOL_MIB` sets the shared memory they may hold at
 * once (default SCRATCH_POOL_BYTES; 0 turns them off).
 */
export function startScratchRings(service: SalusService): ScratchPool | null {
  const dir = service.options.bulkDir;
  if (!dir) return null;
  const { addon, reason } = loadSharedMemory();
  if (!addon) {
    service.log(`salus: uploads go through plain bulk files, one copy more (${reason})`);
    return null;
  }
  const mib = Number(process.env.SALUS_SCRATCH_POOL_MIB);
  const poolBytes = process.env.SALUS_SCRATCH_POOL_MIB && Number.isFinite(mib) && mib >= 0 ? mib * 1024 * 1024 : SCRATCH_POOL_BYTES;
  const pool = new ScratchPool(dir, addon, { poolBytes, log: service.log });
  service.onDidOpenJob((job) => pool.assign(job.id));
  // Who the OS says holds the job's connection: once they have exited, its ring may serve the next job.
  service.onDidIdentifyJob(({ job, peer }) => { if (peer?.pids.length) pool.setOwners(job.id, peer.pids); });
  service.onDidFinishJob((job) => pool.release(job.id));
  return pool;
}
