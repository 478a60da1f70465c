/**
 * An admitted job's session (core/executor/session.ts) and the SessionHost it
 * calls back: iterations wait for the scheduler's grant, batches make room and
 * residency first (core/executor/residency.ts), replies and uncaptured errors
 * go to the job's connection.
 */
import { Session } from '../executor/session.js';
import type { Residency } from '../executor/residency.js';
import type { OpenedGpu } from '../platform/gpu.js';
import type { MemoryManager } from '../memory/types.js';
import { ErrorCode } from '../protocol/messages.js';
import type { Scheduler } from '../scheduler/index.js';
import { recordGpuError, type JobRecord } from './jobRecord.js';
import type { StatePart } from './publisher.js';

/** What a job's session is built from. */
export interface JobSessionDeps {
  gpu: OpenedGpu;
  memory: MemoryManager;
  scheduler: Scheduler;
  residency: Residency;
  /** The bulk channel's folder, or null. */
  bulkDir: string | null;
  markDirty(part: StatePart): void;
  log(line: string): void;
}

/** A new session for `job`, just admitted (the scheduler knows it once the caller adds it). */
export function createJobSession(job: JobRecord, deps: JobSessionDeps): Session {
  const { scheduler, residency } = deps;
  return new Session(job.id, deps.gpu.device, deps.memory, {
    acquireIteration: () => scheduler.requestIteration(job.id),
    prepareBatch: (cmds, codes) => (job.session ? residency.prepare(job.session, cmds, codes) : undefined),
    releaseBatch: () => job.session && residency.release(job.session),
    finishIteration: (elapsedMs, counted) => {
      if (scheduler.jobStats(job.id)?.running) scheduler.finishIteration(job.id, elapsedMs, { counted });
      const done = scheduler.jobStats(job.id)?.itersDone ?? 0;
      if (job.hints.iterations && done >= job.hints.iterations) deps.markDirty('jobs');
    },
    reply: (rid, result, payload) => job.peer?.send({ t: 'reply', rid, result: result ?? null }, payload),
    replyError: (rid, message, gpu) => job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.InvalidArgument, message, gpu } }),
    uncaptured: (error, device) => {
      if (recordGpuError(job, error)) deps.log(`salus: ${job.id}: first uncaptured GPU error (${error.type}): ${error.message}`);
      deps.markDirty('jobs');
      job.peer?.send({ t: 'uncaptured', error, device });
    },
    whenWritable: () => job.peer?.whenWritable() ?? null,
    log: (message) => deps.log(`salus: ${job.id}: ${message}`),
  }, deps.bulkDir);
}
