/**
 * An admitted job's session (core/executor/session.ts) and the SessionHost it
 * calls back: iterations wait for the scheduler's grant, batches make room and
 * residency first (core/executor/residency.ts), replies and uncaptured errors
 * go to the job's connection.
 */
import { Session, type SessionHost } from '../executor/session.js';
import type { Command, GpuErrorJson } from '../protocol/commands.js';
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
  return new Session(job.id, deps.gpu.device, deps.memory, new JobSessionHost(job, deps), deps.bulkDir);
}

/**
 * The SessionHost of one job. A class, not an object of closures made per job: the session's replay loop calls
 * these for every batch, and optimised code that inlined one job's closure was thrown away at the next job
 * ("wrong call target"), so the replay path compiled again for every job.
 */
class JobSessionHost implements SessionHost {
  constructor(private readonly job: JobRecord, private readonly deps: JobSessionDeps) {}

  acquireIteration(): Promise<void> {
    return this.deps.scheduler.requestIteration(this.job.id);
  }

  prepareBatch(cmds: readonly Command[], codes: readonly number[]): Promise<void> | undefined {
    return this.job.session ? this.deps.residency.prepare(this.job.session, cmds, codes) : undefined;
  }

  releaseBatch(): void {
    if (this.job.session) this.deps.residency.release(this.job.session);
  }

  finishIteration(elapsedMs: number, counted: boolean): void {
    const { job, deps: { scheduler } } = this;
    if (scheduler.jobStats(job.id)?.running) scheduler.finishIteration(job.id, elapsedMs, { counted });
    const done = scheduler.jobStats(job.id)?.itersDone ?? 0;
    if (job.hints.iterations && done >= job.hints.iterations) this.deps.markDirty('jobs');
  }

  reply(rid: number, result: unknown, payload?: Uint8Array[]): void {
    this.job.peer?.send({ t: 'reply', rid, result: result ?? null }, payload);
  }

  replyError(rid: number, message: string, gpu?: GpuErrorJson): void {
    this.job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.InvalidArgument, message, gpu } });
  }

  uncaptured(error: GpuErrorJson, device: number): void {
    const { job, deps } = this;
    if (recordGpuError(job, error)) deps.log(`salus: ${job.id}: first uncaptured GPU error (${error.type}): ${error.message}`);
    deps.markDirty('jobs');
    job.peer?.send({ t: 'uncaptured', error, device });
  }

  whenWritable(): Promise<void> | null {
    return this.job.peer?.whenWritable() ?? null;
  }

  log(message: string): void {
    this.deps.log(`salus: ${this.job.id}: ${message}`);
  }
}
